// The benchmark's request: a 1.5 KB Stripe-like JSON event and the headers a sender adds.
export const body = JSON.stringify({
  id: "evt_1NG8Du2eZvKYlo2CuKKVtHwe",
  object: "event",
  type: "invoice.payment_succeeded",
  created: 1700000000,
  data: {
    object: {
      id: "in_1NG8Du2eZvKYlo2C",
      amount_due: 2000,
      amount_paid: 2000,
      currency: "usd",
      customer: "cus_NffrFeUfNV2Hib",
      lines: Array.from({ length: 8 }, (_, i) => ({ id: `il_${i}`, amount: 250, description: `Line item number ${i} of the invoice` })),
      status: "paid",
    },
  },
}).padEnd(1536, " ");

export const headers = {
  "content-type": "application/json",
  "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
  accept: "*/*; q=0.5, application/xml",
  "cache-control": "no-cache",
  "stripe-signature": "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
  "x-request-id": "req_9f8a7b6c5d4e3f2a",
  "x-forwarded-proto": "https",
  "x-amzn-trace-id": "Root=1-65a1b2c3-abcdef0123456789abcdef01",
  "accept-encoding": "gzip",
  "x-custom-tenant": "acme-corp",
  "x-retry-count": "0",
};
