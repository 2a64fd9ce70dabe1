// `npx nx g @aptix/nx-plugin:tool-package <name>`: scaffolds a publishable Aptix tool package that
// passes contract, test, typecheck and build as generated. See docs/contract.md.
'use strict';

const { posix } = require('node:path');
const { generateFiles, getProjects, logger, names, offsetFromRoot, readJson, updateJson, writeJson } = require('@nx/devkit');

const TOOL_NAME_PATTERN = /^[a-z0-9]+(_[a-z0-9]+)*$/;
const TOOL_NAME_MAX_LENGTH = 64;
const PACKAGE_NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const CONTRACT_PACKAGE = '@aptix/tool-contract';
const TOOL_DESCRIPTION = 'Echoes a text with its length in characters.';

/**
 * @typedef {{ name: string; directory?: string; importPath?: string; toolName?: string; description?: string }} ToolPackageSchema
 * @param {import('@nx/devkit').Tree} tree
 * @param {ToolPackageSchema} schema
 */
async function toolPackageGenerator(tree, schema) {
  const options = normalize(tree, schema);
  const contract = findContractPackage(tree);
  const root = readJsonIfExists(tree, 'package.json') ?? {};
  const offset = offsetFromRoot(options.directory);

  writeJson(tree, posix.join(options.directory, 'package.json'), packageJson(options, contract, root));
  writeTsConfigs(tree, options, offset, contract);
  generateFiles(tree, posix.join(__dirname, 'files'), options.directory, {
    ...options,
    toolDescription: TOOL_DESCRIPTION,
    vitestShared: tree.exists('vitest.shared.ts') ? `${offset}vitest.shared.js` : '',
    license: contract.license ?? root.license ?? 'MIT',
  });
  tree.write(posix.join(options.directory, 'tool-schemas.json'), schemaSnapshot(options.toolName));
  addRootReference(tree, options.directory);

  return () => {
    logger.info(`Created ${options.packageName} in ${options.directory}. Next: npm install (links the new workspace package), then npx nx run-many -t typecheck test contract build -p ${options.packageName}.`);
  };
}

/** @param {import('@nx/devkit').Tree} tree @param {ToolPackageSchema} schema */
function normalize(tree, schema) {
  const name = String(schema.name ?? '').trim();
  if (!PACKAGE_NAME_PATTERN.test(name)) throw new Error(`"${name}" is not a valid tool package name: use kebab-case letters and digits, e.g. weather or mode-catalog.`);
  const { className, fileName } = names(name);
  const toolName = schema.toolName ?? fileName.replace(/-/g, '_');
  if (!TOOL_NAME_PATTERN.test(toolName) || toolName.length > TOOL_NAME_MAX_LENGTH) {
    throw new Error(`"${toolName}" is not a valid ToolName: it must be lowercase_snake_case (${TOOL_NAME_PATTERN.source}) and at most ${TOOL_NAME_MAX_LENGTH} characters.`);
  }
  const directory = posix.normalize((schema.directory ?? `packages/tools/${fileName}`).replace(/\\/g, '/')).replace(/\/+$/, '');
  if (directory.startsWith('..') || posix.isAbsolute(directory)) throw new Error(`The directory "${directory}" must be inside the workspace, relative to its root.`);
  if (tree.exists(directory) && tree.children(directory).length > 0) throw new Error(`${directory} already exists and is not empty: choose another name or --directory.`);
  const packageName = schema.importPath ?? `@aptix/tool-${fileName}`;
  const description = oneLine(schema.description ?? `Aptix tools: ${toolName}.`);
  return { name, fileName, className: `${className}Tool`, toolName, directory, packageName, description };
}

/** The contract kit's project in this workspace, if there is one: its version and where its tsconfig is. */
function findContractPackage(tree) {
  for (const [, project] of getProjects(tree)) {
    const pkg = readJsonIfExists(tree, posix.join(project.root, 'package.json'));
    if (pkg?.name === CONTRACT_PACKAGE) {
      return { root: project.root, version: pkg.version, typebox: pkg.peerDependencies?.typebox, license: pkg.license, repository: pkg.repository };
    }
  }
  // Outside the Aptix repository: the @aptix/tool-contract installed in the workspace, if any.
  try {
    const pkg = require(require.resolve(`${CONTRACT_PACKAGE}/package.json`, { paths: [tree.root] }));
    return { root: undefined, version: pkg.version, typebox: pkg.peerDependencies?.typebox, license: undefined, repository: undefined };
  } catch {
    return { root: undefined, version: undefined, typebox: undefined, license: undefined, repository: undefined };
  }
}

function packageJson(options, contract, root) {
  const repository = contract.repository ?? root.repository;
  const url = typeof repository === 'string' ? repository : repository?.url;
  return {
    name: options.packageName,
    version: '0.1.0',
    description: options.description,
    type: 'module',
    license: contract.license ?? root.license ?? 'MIT',
    ...(url ? { repository: { type: 'git', url, directory: options.directory } } : {}),
    engines: { node: '>=20.19' },
    sideEffects: false,
    exports: {
      '.': { '@aptix/source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' },
      './package.json': './package.json',
    },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist', '!dist/**/*.test.*', '!dist/**/*.tsbuildinfo', 'README.md', 'CHANGELOG.md'],
    scripts: { test: 'vitest run' },
    keywords: ['aptix', 'aptix-tool', 'llm', 'agent', 'tools', 'function-calling'],
    aptix: { toolPackage: true },
    dependencies: { [CONTRACT_PACKAGE]: `^${contract.version ?? '0.1.0'}`, typebox: contract.typebox ?? '^1.4.3' },
    publishConfig: { access: 'public' },
  };
}

function writeTsConfigs(tree, options, offset, contract) {
  const base = `${offset}tsconfig.base.json`;
  const dir = options.directory;
  writeJson(tree, posix.join(dir, 'tsconfig.json'), { extends: base, files: [], include: [], references: [{ path: './tsconfig.lib.json' }, { path: './tsconfig.spec.json' }] });
  const references = contract.root === undefined ? [] : [{ path: posix.relative(dir, posix.join(contract.root, 'tsconfig.lib.json')) }];
  writeJson(tree, posix.join(dir, 'tsconfig.lib.json'), {
    extends: base,
    compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/tsconfig.lib.tsbuildinfo' },
    include: ['src/**/*.ts', 'src/**/*.json'],
    exclude: ['src/**/*.test.ts', 'src/**/*.test-d.ts'],
    references,
  });
  writeJson(tree, posix.join(dir, 'tsconfig.spec.json'), {
    extends: base,
    compilerOptions: { outDir: 'out-tsc/spec', tsBuildInfoFile: 'out-tsc/spec/tsconfig.spec.tsbuildinfo', noUnusedLocals: false },
    include: ['src/**/*.test.ts', 'src/**/*.test-d.ts', 'test/**/*.ts'],
    references: [{ path: './tsconfig.lib.json' }],
  });
}

/**
 * The committed snapshot of the generated tool's schema: exactly what `functionToolSchema` makes of the
 * template's TypeBox schema, in the kit's canonical form (keys sorted, two spaces). The generator test
 * proves the two agree by running the contract target on the output.
 */
function schemaSnapshot(toolName) {
  const schema = {
    description: TOOL_DESCRIPTION,
    name: toolName,
    parameters: {
      additionalProperties: false,
      properties: { text: { description: 'The text to work on, as the user gave it.', maxLength: 2000, minLength: 1, type: 'string' } },
      required: ['text'],
      type: 'object',
    },
    type: 'function',
  };
  return `${JSON.stringify({ [toolName]: schema }, null, 2)}\n`;
}

/** What `nx sync` would add: the new project among the root tsconfig's references. */
function addRootReference(tree, directory) {
  if (!tree.exists('tsconfig.json')) return;
  updateJson(tree, 'tsconfig.json', (json) => {
    if (!Array.isArray(json.references)) return json;
    const path = `./${directory}`;
    if (!json.references.some((reference) => posix.normalize(reference.path) === posix.normalize(path))) json.references.push({ path });
    return json;
  });
}

function readJsonIfExists(tree, path) {
  return tree.exists(path) ? readJson(tree, path) : undefined;
}

function oneLine(text) {
  return text.replace(/\s+/g, ' ').replace(/\*\//g, '* /').trim();
}

module.exports = toolPackageGenerator;
module.exports.default = toolPackageGenerator;
module.exports.toolPackageGenerator = toolPackageGenerator;
