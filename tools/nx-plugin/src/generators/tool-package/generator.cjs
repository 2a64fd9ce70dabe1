// `npx nx g @aptix/nx-plugin:tool-package <name>`: scaffolds a publishable Aptix tool package that
// passes contract, test, typecheck and build as generated. See docs/contract.md.
'use strict';

const { posix } = require('node:path');
const {
  generateFiles,
  getProjects,
  logger,
  names,
  offsetFromRoot,
  readJson,
  readNxJson,
  updateJson,
  updateNxJson,
  writeJson,
} = require('@nx/devkit');

const TOOL_NAME_PATTERN = /^[a-z0-9]+(_[a-z0-9]+)*$/;
const TOOL_NAME_MAX_LENGTH = 64;
const PACKAGE_NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const CONTRACT_PACKAGE = '@aptix/tool-contract';
const TOOL_DESCRIPTION = 'Echoes a text with its length in characters.';
const PLUGIN_NAME = '@aptix/nx-plugin';

/**
 * @typedef {{ name: string; directory?: string; importPath?: string; toolName?: string; description?: string; form?: 'class' | 'function' }} ToolPackageSchema
 * @param {import('@nx/devkit').Tree} tree
 * @param {ToolPackageSchema} schema
 */
async function toolPackageGenerator(tree, schema) {
  const root = readJsonIfExists(tree, 'package.json') ?? {};
  const options = normalize(tree, schema, root);
  const contract = findContractPackage(tree);
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
  const addedGlob = coverByWorkspaces(tree, root, options.directory);
  const addedPlugin = registerPlugin(tree);

  return () => {
    if (addedGlob)
      logger.info(
        `Added "${addedGlob}" to the workspaces of package.json, so npm links ${options.directory} as a workspace package.`,
      );
    if (addedPlugin)
      logger.info(`Added "${PLUGIN_NAME}" to the plugins of nx.json, so every tool package gets its contract target.`);
    logger.info(
      `Created ${options.packageName} in ${options.directory}. Next: npm install (links the new workspace package), then npx nx run-many -t typecheck test contract build -p ${options.packageName}.`,
    );
  };
}

/** @param {import('@nx/devkit').Tree} tree @param {ToolPackageSchema} schema @param {Record<string, any>} root the root package.json */
function normalize(tree, schema, root) {
  const name = String(schema.name ?? '').trim();
  if (!PACKAGE_NAME_PATTERN.test(name))
    throw new Error(
      `"${name}" is not a valid tool package name: use kebab-case letters and digits, e.g. weather or mode-catalog.`,
    );
  const { className, fileName } = names(name);
  const toolName = schema.toolName ?? fileName.replace(/-/g, '_');
  if (!TOOL_NAME_PATTERN.test(toolName) || toolName.length > TOOL_NAME_MAX_LENGTH) {
    throw new Error(
      `"${toolName}" is not a valid ToolName: it must be lowercase_snake_case (${TOOL_NAME_PATTERN.source}) and at most ${TOOL_NAME_MAX_LENGTH} characters.`,
    );
  }
  const directory = posix
    .normalize((schema.directory ?? defaultDirectory(workspaceGlobs(root), fileName)).replace(/\\/g, '/'))
    .replace(/\/+$/, '');
  if (directory.startsWith('..') || posix.isAbsolute(directory))
    throw new Error(`The directory "${directory}" must be inside the workspace, relative to its root.`);
  if (tree.exists(directory) && tree.children(directory).length > 0)
    throw new Error(`${directory} already exists and is not empty: choose another name or --directory.`);
  const packageName = schema.importPath ?? `${workspaceScope(root)}/tool-${fileName}`;
  const description = oneLine(schema.description ?? `Aptix tools: ${toolName}.`);
  const form = schema.form ?? 'class';
  if (form !== 'class' && form !== 'function')
    throw new Error(
      `--form ${form} is not a form of tool: use function (one defineTool call) or class (a TypedAgentTool subclass).`,
    );
  return {
    name,
    fileName,
    className: `${className}Tool`,
    toolName,
    directory,
    packageName,
    description,
    form,
    sourceCondition: sourceCondition(tree),
  };
}

/** The npm scope of the workspace: that of the root package's name (`@acme/source` gives `@acme`), else the name itself as one (`acme` gives `@acme`). */
function workspaceScope(root) {
  const name = typeof root.name === 'string' ? root.name : '';
  if (name.startsWith('@') && name.includes('/')) return name.slice(0, name.indexOf('/'));
  const bare = name
    .toLowerCase()
    .replace(/[^a-z0-9-._~]/g, '-')
    .replace(/^[-._]+/, '');
  return bare === '' ? '@aptix' : `@${bare}`;
}

/** The root package.json's workspace globs (`workspaces`, or `workspaces.packages`). */
function workspaceGlobs(root) {
  const workspaces = Array.isArray(root.workspaces) ? root.workspaces : root.workspaces?.packages;
  return Array.isArray(workspaces) ? workspaces.filter((glob) => typeof glob === 'string') : [];
}

/** Whether a workspace glob (`packages/*`, `libs/**`, `tools/cli`) covers the package folder `directory`. */
function globCovers(glob, directory) {
  const pattern = posix.normalize(glob.replace(/^\.\//, '')).replace(/\/+$/, '');
  const source = pattern
    .split('/')
    .map((part) =>
      part === '**'
        ? '.*'
        : part
            .split('*')
            .map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
            .join('[^/]*'),
    )
    .join('/');
  return new RegExp(`^${source}$`).test(directory);
}

/**
 * Where the package goes by default: packages/tools/<name> when the workspaces cover it (as in the Aptix
 * repository); else the first folder of the form `<dir>/*` among the globs, e.g. packages/<name> in a
 * workspace made by create-nx-workspace --preset=ts; else packages/tools/<name>, whose glob is then added.
 */
function defaultDirectory(globs, fileName) {
  const preferred = `packages/tools/${fileName}`;
  if (globs.length === 0 || globs.some((glob) => globCovers(glob, preferred))) return preferred;
  const parent = globs
    .map((glob) => /^(?:\.\/)?([^*]+)\/\*$/.exec(glob)?.[1])
    .find((dir) => dir !== undefined && !dir.startsWith('..'));
  return parent === undefined ? preferred : `${parent}/${fileName}`;
}

/** Adds `<parent>/*` to the root workspaces when none covers `directory`; returns the glob it added. */
function coverByWorkspaces(tree, root, directory) {
  const globs = workspaceGlobs(root);
  const listed = Array.isArray(root.workspaces) || Array.isArray(root.workspaces?.packages);
  if (!tree.exists('package.json') || !listed || globs.some((glob) => globCovers(glob, directory))) return undefined;
  // The folder's siblings are likely packages too: `libs/*` for libs/geo-tools; a top-level folder is listed as itself.
  const glob = posix.dirname(directory) === '.' ? directory : `${posix.dirname(directory)}/*`;
  updateJson(tree, 'package.json', (json) => {
    if (Array.isArray(json.workspaces)) json.workspaces.push(glob);
    else json.workspaces.packages.push(glob);
    return json;
  });
  return glob;
}

/** The workspace's own custom condition for sources (create-nx-workspace sets `@<workspace>/source`), if its tsconfig.base.json names one. */
function sourceCondition(tree) {
  const conditions = readJsonIfExists(tree, 'tsconfig.base.json')?.compilerOptions?.customConditions;
  return Array.isArray(conditions) && typeof conditions[0] === 'string' ? conditions[0] : undefined;
}

/** Lists the plugin in nx.json when neither it nor a path to it is there yet; returns whether it did. */
function registerPlugin(tree) {
  const nxJson = tree.exists('nx.json') ? readNxJson(tree) : undefined;
  if (nxJson === undefined || nxJson === null) return false;
  const plugins = nxJson.plugins ?? [];
  const names = plugins.map((plugin) => (typeof plugin === 'string' ? plugin : plugin.plugin));
  // Listed by name, or by path as a local plugin (the Aptix repository lists ./tools/nx-plugin).
  const isThisPlugin = (name) =>
    name === PLUGIN_NAME ||
    (name.startsWith('.') && readJsonIfExists(tree, posix.join(name, 'package.json'))?.name === PLUGIN_NAME);
  if (names.some(isThisPlugin)) return false;
  updateNxJson(tree, { ...nxJson, plugins: [...plugins, PLUGIN_NAME] });
  return true;
}

/** The contract kit's project in this workspace, if there is one: its version and where its tsconfig is. */
function findContractPackage(tree) {
  for (const [, project] of getProjects(tree)) {
    const pkg = readJsonIfExists(tree, posix.join(project.root, 'package.json'));
    if (pkg?.name === CONTRACT_PACKAGE) {
      return {
        root: project.root,
        version: pkg.version,
        typebox: pkg.peerDependencies?.typebox,
        license: pkg.license,
        repository: pkg.repository,
      };
    }
  }
  // Outside the Aptix repository: the @aptix/tool-contract installed in the workspace, if any.
  try {
    const pkg = require(require.resolve(`${CONTRACT_PACKAGE}/package.json`, { paths: [tree.root] }));
    return {
      root: undefined,
      version: pkg.version,
      typebox: pkg.peerDependencies?.typebox,
      license: undefined,
      repository: undefined,
    };
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
      '.': {
        ...(options.sourceCondition ? { [options.sourceCondition]: './src/index.ts' } : {}),
        types: './dist/index.d.ts',
        import: './dist/index.js',
        default: './dist/index.js',
      },
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
  writeJson(tree, posix.join(dir, 'tsconfig.json'), {
    extends: base,
    files: [],
    include: [],
    references: [{ path: './tsconfig.lib.json' }, { path: './tsconfig.spec.json' }],
  });
  const references =
    contract.root === undefined ? [] : [{ path: posix.relative(dir, posix.join(contract.root, 'tsconfig.lib.json')) }];
  writeJson(tree, posix.join(dir, 'tsconfig.lib.json'), {
    extends: base,
    // emitDeclarationOnly: false, since create-nx-workspace's tsconfig.base.json emits declarations only, and a tool package is imported as JavaScript.
    compilerOptions: {
      rootDir: 'src',
      outDir: 'dist',
      tsBuildInfoFile: 'dist/tsconfig.lib.tsbuildinfo',
      emitDeclarationOnly: false,
    },
    include: ['src/**/*.ts', 'src/**/*.json'],
    exclude: ['src/**/*.test.ts', 'src/**/*.test-d.ts'],
    references,
  });
  writeJson(tree, posix.join(dir, 'tsconfig.spec.json'), {
    extends: base,
    // The tests use Node's globals (URL, import.meta.url); TypeScript 6 loads @types/node only when named.
    compilerOptions: {
      outDir: 'out-tsc/spec',
      tsBuildInfoFile: 'out-tsc/spec/tsconfig.spec.tsbuildinfo',
      noUnusedLocals: false,
      types: ['node'],
    },
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
      properties: {
        text: {
          description: 'The text to work on, as the user gave it.',
          maxLength: 2000,
          minLength: 1,
          type: 'string',
        },
      },
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
    if (!json.references.some((reference) => posix.normalize(reference.path) === posix.normalize(path)))
      json.references.push({ path });
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
