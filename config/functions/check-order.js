// Before create of orders: an order needs a positive amount; the status starts as "new" when none is given.
export default async function checkOrder(paramMap, context) {
  if (typeof paramMap.amount !== 'number' || paramMap.amount <= 0) {
    throw new Error('amount must be a positive number');
  }
  return { status: 'new', ...paramMap };
}
