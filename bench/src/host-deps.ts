/**
 * Libraries the workspace packages depend on and the bench measures directly (awilix, pg, ajv), loaded
 * from the dependencies of the package that uses them, so the bench times the very copies Aptix runs
 * and declares nothing twice.
 */
import { createRequire } from 'node:module';
import type * as Awilix from 'awilix';
import type * as Pg from 'pg';
import type { Ajv as AjvClass, Options as AjvOptions } from 'ajv';

const hostRequire = createRequire(import.meta.resolve('@aptix/host/package.json'));
const contractRequire = createRequire(import.meta.resolve('@aptix/tool-contract/package.json'));

export const awilix = hostRequire('awilix') as typeof Awilix;
export const pg = hostRequire('pg') as typeof Pg;

/** An ajv made as `@aptix/tool-contract` makes its own (same options, same formats). */
export function contractAjv(): AjvClass {
  const { Ajv } = contractRequire('ajv') as { Ajv: new (options: AjvOptions) => AjvClass };
  const addFormats = contractRequire('ajv-formats') as (ajv: AjvClass) => void;
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    coerceTypes: false,
    useDefaults: false,
    messages: true,
  });
  addFormats(ajv);
  return ajv;
}
