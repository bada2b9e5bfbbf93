import { PRODUCT_NAME } from '../config/product';

/** The document title, "Sign in · Gatehouse". React 19 hoists `<title>` into `<head>`. */
export function PageTitle({ title }: { title: string }) {
  return <title>{`${title} · ${PRODUCT_NAME}`}</title>;
}
