/**
 * @aptix/tool-contract/testing: the contract kit, and helpers for testing tools. Everything exported
 * here is public API. It never imports vitest: the vitest suite is `@aptix/tool-contract/testing/vitest`.
 */
export { CapturingAdminLogger, type CapturedLogEntry } from '../admin-logger.js';
export { testContext } from './test-context.js';

export {
  CONTRACT_CHECK_OF,
  ContractCheckCode,
  type ContractCheck,
  type ContractFinding,
  type ContractFindingCode,
} from './codes.js';
export {
  verifyToolContract,
  type ContractToolFactory,
  type GarbageRun,
  type StrictModeReport,
  type ToolContractReport,
  type VerifyToolContractOptions,
} from './verify-tool-contract.js';
export {
  verifyToolPackage,
  type ContractSetup,
  type ToolPackageReport,
  type VerifyToolPackageOptions,
} from './verify-tool-package.js';
export { formatToolPackageReport } from './format-report.js';
export { UNIT_SNAPSHOT_FILE, verifyPackageUnits, type PackageUnitsReport } from './verify-units.js';
export {
  checkSchemaSnapshot,
  SCHEMA_SNAPSHOT_FILE,
  schemaSnapshotText,
  type SchemaSnapshotOptions,
  type SchemaSnapshotResult,
} from './schema-snapshot.js';
export {
  schemasInFreshProcess,
  type ProcessSchemaEntry,
  type ProcessSchemaOptions,
  type ProcessSchemas,
} from './process-schemas.js';
export { garbageArguments, type GarbageArguments } from './garbage.js';
export { describeMalformedResult } from './invoke-result-shape.js';
export { StandInCalledError, withStandIns, type DependenciesWithStandIns } from './stand-ins.js';
