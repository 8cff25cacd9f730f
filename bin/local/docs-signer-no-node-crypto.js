// node:crypto in the /docs page's bundle: the shared signing module imports it for the service's side
// (createHmac, timingSafeEqual); the page signs with WebCrypto and never calls it.
module.exports = {};
