/** A few DOM helpers: elements from a tag, attributes and children, text always as text (never HTML). */
type Child = Node | string | null | undefined | false;
type Attributes = Readonly<Record<string, string | number | boolean | EventListener | undefined>>;

export const h = (tag: string, attributes: Attributes = {}, ...children: readonly (Child | readonly Child[])[]): HTMLElement => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
};

export const clear = (element: Element, ...children: readonly (Node | string | null)[]): void =>
  element.replaceChildren(...children.filter((child): child is Node | string => child !== null));

export const time = (at: number): string => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const json = (value: unknown): string => JSON.stringify(value, null, 2);
