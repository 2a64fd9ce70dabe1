import { Type } from 'typebox';

/** Aptix's error shape, as every route declares it. */
export const ErrorBody = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
