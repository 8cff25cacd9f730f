// Tests run on the machine's Node.js, the functions on Node.js 22: silence the SDK's upgrade notice.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
