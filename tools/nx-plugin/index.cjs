// @aptix/nx-plugin: infers a `contract` target for every tool package, i.e. every workspace project whose
// package.json says "aptix": { "toolPackage": true }. The target runs the contract kit
// (@aptix/tool-contract/testing) over the package's built entry: see docs/contract.md.
// CommonJS on purpose: Nx loads local plugins with require(), and the root package is "type": "module".
'use strict';

const { existsSync, readFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');
const { createNodesFromFiles } = require('@nx/devkit');

/** The target's name, unless the plugin's options in nx.json say otherwise. */
const DEFAULT_TARGET_NAME = 'contract';
const RUNNER = join(__dirname, 'src', 'run-contract.mjs');

/**
 * @typedef {{ targetName?: string }} AptixPluginOptions
 * @type {import('@nx/devkit').CreateNodes<AptixPluginOptions>}
 */
const createNodes = [
  '**/package.json',
  async (configFiles, options, context) => {
    const isWorkspacePackage = workspaceMatcher(context.workspaceRoot);
    const files = configFiles.filter(
      (file) => isWorkspacePackage(file) || existsSync(join(context.workspaceRoot, dirname(file), 'project.json')),
    );
    return createNodesFromFiles((file, opts, ctx) => contractNode(file, opts ?? {}, ctx), files, options, context);
  },
];

/**
 * The `contract` target of one project, or nothing when its package.json does not mark a tool package.
 * @param {string} packageJsonPath
 * @param {AptixPluginOptions} options
 * @param {import('@nx/devkit').CreateNodesContext} context
 */
function contractNode(packageJsonPath, options, context) {
  const root = dirname(packageJsonPath);
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(join(context.workspaceRoot, packageJsonPath), 'utf8'));
  } catch {
    return {};
  }
  if (pkg?.aptix?.toolPackage !== true) return {};

  const namedInputs = context.nxJsonConfiguration.namedInputs ?? {};
  const own = 'production' in namedInputs ? 'production' : 'default';
  const runner = relative(context.workspaceRoot, RUNNER).split('\\').join('/');
  const setup =
    typeof pkg.aptix.contract?.setup === 'string'
      ? [`{projectRoot}/${pkg.aptix.contract.setup.replace(/^\.\//, '')}`]
      : [];
  const targetName = options.targetName ?? DEFAULT_TARGET_NAME;
  return {
    projects: {
      [root]: {
        targets: {
          [targetName]: {
            // The report names this target, not the bare `npx aptix-contract --update`, to update a snapshot.
            command: `node ${runner} ${root === '' ? '.' : root} --update-command ${JSON.stringify(`npx nx run ${projectName(pkg, root)}:${targetName} --update`)}`,
            cache: true,
            // The runner imports the built entry of the package and of the kit.
            dependsOn: ['build', '^build'],
            inputs: [
              own,
              `^${own}`,
              ...setup,
              `{workspaceRoot}/${runner}`,
              { externalDependencies: ['typebox', 'ajv'] },
            ],
            // --update writes the snapshots (tools; prompts and resources): a cache hit must restore them.
            outputs: ['{projectRoot}/tool-schemas.json', '{projectRoot}/unit-schemas.json'],
            metadata: {
              technologies: ['aptix'],
              description:
                'Checks every exported tool against the Aptix tool contract and the committed schema snapshot.',
              help: {
                command: `node ${runner} --help`,
                example: { args: ['--update'] },
              },
            },
          },
        },
      },
    },
  };
}

/** The project's name as Nx gives it to a package.json project: `nx.name`, else the package name, else the folder. */
function projectName(pkg, root) {
  return pkg.nx?.name ?? pkg.name ?? (root === '' ? '.' : root);
}

/** Matches package.json files of the package manager's workspaces, as Nx's own package.json plugin does. */
function workspaceMatcher(workspaceRoot) {
  try {
    const { buildPackageJsonPatterns, buildPackageJsonWorkspacesMatcher } = require('@nx/devkit/internal');
    const patterns = buildPackageJsonPatterns(workspaceRoot, (file) =>
      JSON.parse(readFileSync(join(workspaceRoot, file), 'utf8')),
    );
    return buildPackageJsonWorkspacesMatcher(patterns);
  } catch {
    return () => true;
  }
}

module.exports = { createNodes, createNodesV2: createNodes, DEFAULT_TARGET_NAME };
