/**
 * get-list as the service runs it (docs/interface.md §5, §21): where the process registered a MySQL engine
 * (sql/mirror-engine.ts; `npm start -- --sql-engine mysql://…`), a list naming related fields that the read budget
 * cannot serve runs there (related-on-mirror.ts) instead of answering 2001.
 */
import { createGetListOperation } from '../query/get-list';
import { registeredMirrorEngine } from '../sql/mirror-engine';
import { relatedOnMirror } from './related-on-mirror';

export const getListOperation = createGetListOperation({ relatedEngine: relatedOnMirror(registeredMirrorEngine) });
