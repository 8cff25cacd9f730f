#!/usr/bin/env node
/**
 * The `das` executable (package.json "bin"). The tool is TypeScript and the repository has no build step, so
 * this shim registers tsx (already what `npm start` runs on) and loads bin/das.ts: it works from a fresh clone
 * right after `npm ci`. tsx's loader entry registers both its CommonJS and its ES module hooks, which `serve`
 * needs (the handlers import ES-module-only packages such as middy).
 */
import('tsx').then(() => require('./das.ts').main());
