/** The key lives in this tab's session storage only (DESIGN section 6): closing the tab signs out. */
const KEY_NAME = 'relay-console-api-key';

export const storedKey = (): string | null => sessionStorage.getItem(KEY_NAME);
export const storeKey = (key: string) => sessionStorage.setItem(KEY_NAME, key);
export const forgetKey = () => sessionStorage.removeItem(KEY_NAME);
