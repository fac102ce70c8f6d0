import { render } from 'preact';
import { BookingPage } from './page.js';
import './styles.css';
import './embed.css';

const root = document.getElementById('app')!;
render(<BookingPage clientId={root.dataset.clientId ?? ''} />, root);

// In a frame of /book/embed.js (?embed=1), tell the embedding page the content's height on every
// change so it sizes the frame to fit. Target origin '*': the embedding site's origin is not known
// here, and a height is no secret; only sites in the company's allowedDomains can frame the page
// at all (CSP frame-ancestors), so only they receive it.
if (new URLSearchParams(location.search).get('embed') === '1' && window.parent !== window) {
  document.documentElement.classList.add('embed');
  // The body, not the document: the document is never shorter than the frame, so it would never shrink.
  const post = () => window.parent.postMessage({ type: 'slotwise:height', height: Math.ceil(document.body.getBoundingClientRect().height) }, '*');
  new ResizeObserver(post).observe(document.body);
  post();
}
