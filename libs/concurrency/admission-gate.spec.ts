import { expect } from 'chai';
import { AdmissionGate } from './admission-gate.js';

describe('AdmissionGate', () => {
  it('gives places up to its size, refuses past it, and admits again once a place is given back', () => {
    const gate = new AdmissionGate(2);
    const first = gate.tryEnter();
    const second = gate.tryEnter();
    expect(first).to.be.a('function');
    expect(second).to.be.a('function');
    expect(gate.tryEnter()).to.equal(undefined);
    expect(gate.inUse).to.equal(2);
    first!();
    expect(gate.inUse).to.equal(1);
    expect(gate.tryEnter()).to.be.a('function');
  });

  it('gives a place back once however often its release is called', () => {
    const gate = new AdmissionGate(1);
    const release = gate.tryEnter()!;
    release();
    release();
    expect(gate.inUse).to.equal(0);
    gate.tryEnter();
    expect(gate.tryEnter()).to.equal(undefined);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new AdmissionGate(0)).to.throw(RangeError);
    expect(() => new AdmissionGate(1.5)).to.throw(RangeError);
  });
});
