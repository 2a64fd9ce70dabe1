import { relative } from 'node:path';
import type { ContractFinding } from './codes.js';
import type { ToolContractReport } from './verify-tool-contract.js';
import type { ToolPackageReport } from './verify-tool-package.js';

/**
 * A tool package's report as the `contract` target prints it: one line per tool, every violation and
 * warning in full under it, the snapshot, and how long the package took.
 *
 * @example console.log(formatToolPackageReport(await verifyToolPackage(dir)));
 */
export function formatToolPackageReport(report: ToolPackageReport, cwd: string = process.cwd()): string {
  const lines: string[] = [];
  const where = relative(cwd, report.packageDir) || '.';
  const entry = report.entry === undefined ? '' : ` → ${relative(report.packageDir, report.entry)}`;
  lines.push(
    `contract ${report.packageName} (${where}${entry})${report.setup === undefined ? '' : `, setup ${report.setup}`}`,
  );
  const width = Math.max(0, ...report.tools.map((tool) => tool.tool.length));
  for (const tool of report.tools) {
    lines.push(`  ${tool.ok ? '✓' : '✗'} ${tool.tool.padEnd(width)}  ${summary(tool)}`);
    for (const finding of tool.violations) lines.push(...findingLines('✗', finding));
    for (const finding of tool.warnings) lines.push(...findingLines('!', finding));
  }
  for (const finding of report.violations) lines.push(...findingLines('✗', finding, '  '));
  for (const finding of report.warnings) lines.push(...findingLines('!', finding, '  '));
  if (report.snapshot !== undefined) lines.push(`  schema snapshot: ${snapshotText(report.snapshot)}`);
  const violations = report.violations.length + report.tools.reduce((sum, tool) => sum + tool.violations.length, 0);
  const warnings = report.warnings.length + report.tools.reduce((sum, tool) => sum + tool.warnings.length, 0);
  const counts = `${report.tools.length} tool${report.tools.length === 1 ? '' : 's'}, ${violations} violation${violations === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  lines.push(
    `${report.ok ? '✓' : '✗'} ${report.packageName} ${report.ok ? 'keeps' : 'breaks'} the tool contract (${counts}) in ${(report.durationMs / 1000).toFixed(2)} s`,
  );
  return lines.join('\n');
}

function summary(tool: ToolContractReport): string {
  const strict = tool.strict.offered
    ? 'strict'
    : tool.strict.declared === false
      ? `strict: false (strict mode would refuse: ${tool.strict.problems.join('; ') || 'nothing; see the warning'})`
      : 'not strict';
  const garbage = tool.garbage.length === 0 ? 'garbage not run' : `${tool.garbage.length / 2} garbage inputs × 2 ways`;
  const standIns = tool.standIns.length === 0 ? '' : `, stand-ins: ${tool.standIns.join(', ')}`;
  return `${strict}, ${garbage}${standIns}, ${Math.round(tool.durationMs)} ms`;
}

function findingLines(mark: string, finding: ContractFinding, indent = '    '): string[] {
  return [`${indent}${mark} ${finding.code}: ${finding.message}`];
}

function snapshotText(snapshot: NonNullable<ToolPackageReport['snapshot']>): string {
  switch (snapshot.status) {
    case 'up-to-date':
      return 'up to date';
    case 'written':
      return `written (${snapshot.changed.join(', ') || 'formatting'}): commit it with a changeset`;
    case 'differs':
      return `differs for ${snapshot.changed.join(', ') || 'formatting'}`;
    case 'missing':
      return 'missing';
    case 'not-updated':
      return 'not updated';
  }
}
