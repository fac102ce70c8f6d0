import { render } from 'preact';
import { ManagePage } from './page.js';
import '../booking/styles.css';

const root = document.getElementById('app')!;
render(<ManagePage token={root.dataset.token ?? ''} />, root);
