/** The product's own name: the header, and the suffix of every document title. */
export const PRODUCT_NAME = 'Gatehouse';
