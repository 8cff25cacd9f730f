// After get-one of customers: the caller receives the e-mail address masked (a***@example.com).
export default async function maskEmail(customer, context) {
  if (typeof customer.email !== 'string') return customer;
  return { ...customer, email: customer.email.replace(/^(.).*@/, '$1***@') };
}
