import { render } from 'preact';
import { BookingPage } from './page.js';
import './styles.css';

const root = document.getElementById('app')!;
render(<BookingPage clientId={root.dataset.clientId ?? ''} />, root);
