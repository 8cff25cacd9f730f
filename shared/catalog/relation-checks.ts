/**
 * The configuration checks of a dataset's `relations` (docs/interface.md §21), run with the schema's other
 * cross-reference checks: each relation names a field of its own dataset that holds record ids (a `string` or
 * `text` field), a dataset that exists, and a name that is neither one of the dataset's fields nor another of its
 * relations (a dotted name `<name>.<field>` must mean one thing). Relations may form cycles (orders → customers →
 * orders): a get-list follows them one level deep only. Written against the shapes it reads, so that the schema can
 * call it without a cycle.
 */

import { isSystemField } from '../contract/codes';

type Problem = (path: (string | number)[], message: string) => void;

interface RelationShape {
  name: string;
  field: string;
  dataset: string;
}

interface DatasetShape {
  datasetCode: string;
  fields: readonly { name: string; type: string }[];
  relations?: readonly RelationShape[] | undefined;
}

/** The field types a link may be kept in: record ids are text. */
export const LINK_FIELD_TYPES: readonly string[] = ['string', 'text'];

export function checkRelations(datasets: readonly DatasetShape[], problem: Problem): void {
  const known = new Set(datasets.map((dataset) => dataset.datasetCode));
  datasets.forEach((dataset, i) => {
    const fields = new Map(dataset.fields.map((field) => [field.name, field]));
    const names = new Set<string>();
    (dataset.relations ?? []).forEach((relation, j) => {
      const at = ['datasets', i, 'relations', j];
      if (isSystemField(relation.name)) {
        problem([...at, 'name'], `'${relation.name}' is a system field's name; give the relation another name`);
      } else if (fields.has(relation.name)) {
        problem(
          [...at, 'name'],
          `relation '${relation.name}' has the name of a field of dataset '${dataset.datasetCode}'; give it another name`,
        );
      }
      if (names.has(relation.name)) problem([...at, 'name'], `duplicate relation '${relation.name}'`);
      names.add(relation.name);
      const field = fields.get(relation.field);
      if (!field) {
        problem([...at, 'field'], `unknown field '${relation.field}' of dataset '${dataset.datasetCode}'`);
      } else if (!LINK_FIELD_TYPES.includes(field.type)) {
        problem(
          [...at, 'field'],
          `field '${relation.field}' is of type ${field.type}; a relation's field holds record ids, so it must be of type string or text`,
        );
      }
      if (!known.has(relation.dataset)) problem([...at, 'dataset'], `unknown dataset '${relation.dataset}'`);
    });
  });
}
