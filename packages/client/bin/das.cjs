#!/usr/bin/env node
// The `das` command of the package: the compiled CommonJS build of src/cli/das.ts.
require('../dist/cjs/cli/das.js').main();
