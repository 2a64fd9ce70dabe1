import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicPackages } from './registry.js';
import { WORKSPACE } from './support.js';

/** `npm pack`'s file name for a package, without the version: @aptix/tool-contract gives aptix-tool-contract. */
const tarballName = (name: string): string => name.replace(/^@/, '').replace('/', '-');

/** Every public package by tarball name, with the tarball names of the @aptix packages it depends on. */
function dependencyGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const pkg of publicPackages()) {
    const manifest = JSON.parse(readFileSync(join(pkg.path, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    graph.set(
      tarballName(pkg.name),
      Object.keys(manifest.dependencies ?? {})
        .filter((name) => name.startsWith('@aptix/'))
        .map(tarballName),
    );
  }
  return graph;
}

/** A package and every @aptix package it needs, directly or not. */
function closure(graph: Map<string, string[]>, first: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const dependency of graph.get(name) ?? []) visit(dependency);
  };
  visit(first);
  return [...seen].sort();
}

/** The table of docs/tool-packages.md's tarball section: each use and its tarball names, "the host's" expanded. */
function tarballTable(guide: string): Map<string, string[]> {
  const section = guide.slice(guide.indexOf('## Without a registry: the tarballs each use needs'));
  const rows = new Map<string, string[]>();
  for (const [, use, cell] of section.matchAll(/^\| ([^|]+?) \| ([^|]*`aptix-[^|]*) \|$/gm)) {
    const names = [...cell!.matchAll(/`(aptix-[a-z-]+)`/g)].map((match) => match[1]!);
    rows.set(use!, [...(cell!.includes("the host's") ? (rows.get('a host') ?? []) : []), ...names].sort());
  }
  return rows;
}

/** The tarball names an ```sh tarballs=<id> block installs, its `{a,b}` brace list expanded. */
function commandTarballs(guide: string, id: string): string[] {
  const block = new RegExp(`\`\`\`sh tarballs=${id}\\n([\\s\\S]*?)\`\`\``).exec(guide)?.[1] ?? '';
  return [...block.matchAll(/\$P\/aptix-(?:\{([^}]+)\}|([a-z-]+?))-\*\.tgz/g)]
    .flatMap(([, list, one]) => (list ?? one!).split(',').map((name) => `aptix-${name}`))
    .sort();
}

describe('docs/tool-packages.md: the tarballs each use needs', () => {
  const guide = readFileSync(join(WORKSPACE, 'docs', 'tool-packages.md'), 'utf8');
  const graph = dependencyGraph();
  const table = tarballTable(guide);

  it('names every use a newcomer meets', () => {
    expect([...table.keys()]).toEqual([
      'a tool package',
      'the Nx plugin',
      'a host',
      'a host bridging MCP servers',
      'the AI SDK',
      'LangChain',
      'the Agents SDK',
    ]);
  });

  it('a tool package needs the contract kit alone', () => {
    expect(table.get('a tool package')).toEqual(['aptix-tool-contract']);
    expect(closure(graph, 'aptix-tool-contract')).toEqual(['aptix-tool-contract']);
  });

  it('each line is its first package and exactly the @aptix packages that one needs, so installing the line alone works', () => {
    const firsts: Record<string, string[]> = {
      'the Nx plugin': ['aptix-nx-plugin', 'aptix-tool-contract'],
      'a host': ['aptix-host'],
      'a host bridging MCP servers': ['aptix-host', 'aptix-tool-mcp-bridge'],
      'the AI SDK': ['aptix-ai-sdk'],
      LangChain: ['aptix-langchain'],
      'the Agents SDK': ['aptix-openai-agents'],
    };
    for (const [use, tops] of Object.entries(firsts)) {
      const needed = [...new Set(tops.flatMap((top) => closure(graph, top)))].sort();
      expect(table.get(use), use).toEqual(needed);
    }
  });

  it('its commands install what the table says', () => {
    expect(commandTarballs(guide, 'tool-package')).toEqual(table.get('a tool package'));
    expect(commandTarballs(guide, 'host')).toEqual(table.get('a host'));
  });
});
