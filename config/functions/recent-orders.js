// After get-one of customers: adds the customer's latest orders, read as the caller (its grant applies).
export default async function recentOrders(customer, context) {
  const orders = await context.client.models.orders.getList({ customer_id: customer.id, pageSize: 5 });
  return { ...customer, recentOrders: orders.tableData.map((o) => ({ id: o.id, amount: o.amount, status: o.status })) };
}
