interface TopicPause {
  all: boolean;
  /** Paused partitions while `all` is false. */
  paused: Set<number>;
  /** Partitions resumed one by one while `all` is true. */
  resumed: Set<number>;
}

/**
 * Which topics and partitions a consumer has paused. Mirrors kafkajs' own bookkeeping exactly, so both
 * adapters answer the same to the same sequence of pause/resume calls.
 */
export class PauseState {
  private readonly topics = new Map<string, TopicPause>();

  pause(topic: string, partitions?: number[]): void {
    const state = this.stateOf(topic);
    if (partitions === undefined) {
      state.all = true;
      state.paused.clear();
      state.resumed.clear();
      return;
    }
    for (const partition of partitions) {
      state.paused.add(partition);
      state.resumed.delete(partition);
    }
    state.all = false;
  }

  resume(topic: string, partitions?: number[]): void {
    const state = this.topics.get(topic);
    if (!state) return;
    if (partitions === undefined) {
      this.topics.delete(topic);
      return;
    }
    for (const partition of partitions) {
      state.paused.delete(partition);
      if (state.all) state.resumed.add(partition);
    }
  }

  isPaused(topic: string, partition: number): boolean {
    const state = this.topics.get(topic);
    if (!state) return false;
    return (state.all && !state.resumed.has(partition)) || state.paused.has(partition);
  }

  /** Replays the state as pause/resume calls, to restore it on a fresh kafkajs consumer. */
  replay(target: { pause(topic: string, partitions?: number[]): void; resume(topic: string, partitions?: number[]): void }): void {
    for (const [topic, state] of this.topics) {
      if (state.all) {
        target.pause(topic);
        if (state.resumed.size > 0) target.resume(topic, [...state.resumed]);
      } else if (state.paused.size > 0) {
        target.pause(topic, [...state.paused]);
      }
    }
  }

  private stateOf(topic: string): TopicPause {
    let state = this.topics.get(topic);
    if (!state) {
      state = { all: false, paused: new Set(), resumed: new Set() };
      this.topics.set(topic, state);
    }
    return state;
  }
}
