/** A JSON Schema node as plain data (TypeBox schemas are such objects). */
export type JsonSchema = { readonly [keyword: string]: unknown };
