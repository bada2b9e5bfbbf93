import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SignInPage } from './SignInPage';

/**
 * The sign-in page's own entry (sign-in.html): React and a few icons, none of the console's libraries,
 * so the page most people see first stays small. Its look is in sign-in.html's inline stylesheet.
 */
const container = document.getElementById('root');
if (!container) throw new Error('sign-in.html has no #root element');

createRoot(container).render(
  <StrictMode>
    <SignInPage />
  </StrictMode>,
);
