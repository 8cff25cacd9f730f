// Tests run on the machine's Node.js, the functions on Node.js 22: silence the SDK's upgrade notice.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

// A server a test starts (`das serve`, `npm start`) records its address here, and `das` run by a test reads it
// from here: never the checkout's record (node_modules/.cache/data-access-service/local-service.json), which
// says where a developer's own `npm start` listens. Tests neither move that record nor call that server.
const os = require('node:os');
const path = require('node:path');
process.env.DAS_LOCAL_SERVICE_FILE = path.join(os.tmpdir(), `das-test-local-service-${process.pid}.json`);
