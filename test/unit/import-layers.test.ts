/** The direction of imports (docs/layers.md): downward only, no circles, and the lint rule in step with it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ALLOWED_UPWARD,
  isLayerOverride,
  LAYERS,
  layerOf,
  layerReport,
  restrictedImportOverrides,
} from '../support/import-layers';

const ROOT = join(__dirname, '../..');

describe('import layers', () => {
  const report = layerReport(ROOT);

  it('has no import from a lower folder to a higher one, beyond the ones explained in place', () => {
    const unexplained = report.upward.map((edge) => `${edge.from} -> ${edge.to}`).filter((e) => !ALLOWED_UPWARD.has(e));
    expect(unexplained).toEqual([]);
    expect(ALLOWED_UPWARD.size).toBeLessThanOrEqual(2);
  });

  it('has no circle between files', () => {
    expect(report.fileCircles).toEqual([]);
  });

  it('has no circle between folders', () => {
    expect(report.folderCircles).toEqual([]);
  });

  it('puts the client package at the bottom and the contract next: they import nothing else of the service', () => {
    expect(LAYERS.slice(0, 2)).toEqual(['packages/client', 'shared/contract']);
    expect(layerOf('packages/client/src/signature.ts')).toBe('packages/client');
    expect(layerOf('shared/contract/errors.ts')).toBe('shared/contract');
  });

  it('keeps biome.json enforcing the same order (regenerate with --write-biome)', () => {
    const biome = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8'));
    expect(biome.overrides.filter(isLayerOverride)).toEqual(restrictedImportOverrides());
  });
});
