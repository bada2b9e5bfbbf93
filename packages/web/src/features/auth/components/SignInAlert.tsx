import type { ReactNode } from 'react';

export type AlertTone = 'red' | 'blue' | 'gray';

export interface AlertProps {
  tone: AlertTone;
  title: string;
  icon: ReactNode;
  children: ReactNode;
  role?: 'alert' | 'status';
  'data-error-code'?: string;
}

/** A notice on the sign-in card, drawn as the console's alerts are, without Mantine (the page's own CSS, sign-in.html). */
export function Alert({ tone, title, icon, children, role, ...data }: AlertProps) {
  return (
    <div className={`alert alert-${tone}`} role={role} {...data}>
      <span className="alert-icon">{icon}</span>
      <div className="alert-body">
        <p className="alert-title">{title}</p>
        {children}
      </div>
    </div>
  );
}
