// /book/embed.js: puts the hosted booking page on another site (docs/api.md, Embed). Either
//   <script src="https://slotwise.example/book/embed.js" data-client-id="pub_..." async></script>
// (the element is inserted right after the script tag), or the script once and the element where
// the page should go:
//   <slotwise-booking client-id="pub_..."></slotwise-booking>
// The element holds an iframe of /book/<id>?embed=1 on the script's own origin, and sizes it to
// the page's content from the page's `slotwise:height` messages (web/booking/main.tsx).

// A module to TypeScript (its names are not globals); esbuild wraps it in a function anyway.
export {};

const ELEMENT = 'slotwise-booking';
const FRAME_TITLE = 'Book an appointment';
/** No page is this tall; a larger number is not a height the page sent. */
const MAX_HEIGHT = 100_000;

/** The script's own origin: the page and its API live there, wherever the host site is. */
function scriptOrigin(): string | undefined {
  // currentScript is set only while this (classic) script first runs; read it at once.
  const script = document.currentScript as HTMLScriptElement | null;
  const src = script?.src || document.querySelector<HTMLScriptElement>('script[src*="/book/embed.js"]')?.src;
  return src ? new URL(src, location.href).origin : undefined;
}

const pageOrigin = scriptOrigin();

/** `{ type: 'slotwise:height', height }` with a sane height, or null for anything else. */
function heightOf(data: unknown): number | null {
  if (typeof data !== 'object' || data === null) return null;
  const { type, height } = data as { type?: unknown; height?: unknown };
  if (type !== 'slotwise:height' || typeof height !== 'number' || !Number.isFinite(height)) return null;
  return Math.min(Math.max(Math.ceil(height), 0), MAX_HEIGHT);
}

class SlotwiseBooking extends HTMLElement {
  static observedAttributes = ['client-id'];
  private frame: HTMLIFrameElement | undefined;

  // Only messages from this element's own frame, sent by a page of the script's origin, resize it:
  // any other window (the host site's scripts, another frame) could send the same shape.
  private readonly onMessage = (event: MessageEvent) => {
    if (!this.frame || event.source !== this.frame.contentWindow || event.origin !== pageOrigin) return;
    const height = heightOf(event.data);
    if (height !== null) this.frame.style.height = `${height}px`;
  };

  connectedCallback() {
    window.addEventListener('message', this.onMessage);
    this.render();
  }

  disconnectedCallback() {
    window.removeEventListener('message', this.onMessage);
  }

  attributeChangedCallback() {
    if (this.isConnected) this.render();
  }

  private render() {
    const clientId = this.getAttribute('client-id');
    if (!pageOrigin || !clientId) return;
    const src = `${pageOrigin}/book/${encodeURIComponent(clientId)}?embed=1`;
    if (!this.frame) {
      this.frame = document.createElement('iframe');
      this.frame.title = FRAME_TITLE;
      this.frame.style.cssText = 'display:block;width:100%;border:none;';
      this.appendChild(this.frame);
    }
    if (this.frame.src !== src) this.frame.src = src;
  }
}

if (!customElements.get(ELEMENT)) customElements.define(ELEMENT, SlotwiseBooking);

// The one-line form: the script's own data-client-id places an element right after the script.
const script = document.currentScript as HTMLScriptElement | null;
const clientId = script?.dataset.clientId;
if (script && clientId) {
  const element = document.createElement(ELEMENT);
  element.setAttribute('client-id', clientId);
  script.after(element);
}
