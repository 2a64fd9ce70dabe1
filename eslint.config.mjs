// ESLint for the whole workspace: type-aware correctness rules only. Prettier owns every question of style,
// so no stylistic rule is turned on here and no preset is pulled in (a preset would bring style rules with it).
// Each project's inferred `lint` target (@nx/eslint/plugin in nx.json) runs `eslint .` in its folder with this file.
import tseslint from 'typescript-eslint';

// Files that a tsconfig includes, hence that TypeScript can type: they get the type-aware rules. The rest (JS
// fixtures, vitest configs, scripts, the nx-plugin's tests, which no tsconfig includes) get the syntax rules only.
const typed = ['{apps,packages,bench,e2e}/**/src/**/*.{ts,tsx}', '{apps,packages,e2e}/**/test/**/*.ts'];

export default tseslint.config(
  {
    // Built, installed or generated files, and the search corpus (data).
    ignores: [
      '**/node_modules/',
      '**/dist/',
      '**/out-tsc/',
      '**/coverage/',
      '**/.nx/',
      '**/packed/',
      'packages/tool-search/test/corpus/',
    ],
  },
  {
    files: ['**/*.{ts,tsx,mts,cts,js,mjs,cjs}'],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // The verbatimModuleSyntax build keeps what a value import names: a type-only import must say so.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // ...and `import { type A }` keeps an empty `import 'x'` that loads the module: all-type imports say `import type`.
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // An async executor swallows its own throw, and the promise never settles: a hang instead of an error.
      'no-async-promise-executor': 'error',
      // A generator that never yields is a function that returns an empty iterator by mistake; the deliberate ones say so.
      'require-yield': 'error',
      // A control character in a regular expression is a typo more often than not; the deliberate ones say so.
      'no-control-regex': 'error',
    },
  },
  {
    files: typed,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An unawaited rejection took the host down once: every promise is awaited, returned, or voided on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise handed to a callback slot (an event handler, forEach, a timer) is dropped with its rejection.
      '@typescript-eslint/no-misused-promises': 'error',
      // Awaiting a value that is not a promise says the code thinks it is async when it is not.
      '@typescript-eslint/await-thenable': 'error',
      // Switches over error codes and union kinds missed cases; a new member must fail the lint where it is unhandled.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      // Callers read .message, .code and the cause: throwing a string or an object loses all three.
      // Passing on what was caught (unknown, or an AbortSignal's any-typed reason) is not a new throw: allowed.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // The same for rejections: a promise rejects with an Error.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // `return promise` inside try skips the catch and finally that the author wrote for it.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
    },
    // Not chosen: no-unnecessary-type-assertion. Without noUncheckedIndexedAccess every `list[i]!` in the code
    // base is "unnecessary" to it (677 of them), yet each one marks where the author checked that the element is
    // there; the note is worth more than the rule. Not here either: import-x/no-cycle, which skips type-only
    // imports, the very kind of cycle this code base had; `npx --yes madge --circular --extensions ts,tsx <src
    // folders>` finds those (madge 8 declares TypeScript 5 as a peer, so it is not a dependency of the workspace).
  },
  {
    files: ['**/src/**/*.{ts,tsx}'],
    rules: {
      // Shipped code states its types; `unknown` plus a check is the honest spelling of "any value".
      '@typescript-eslint/no-explicit-any': 'error',
      // A check the types say can never fail is dead code or a wrong type; both hide the real case. Shipped code
      // only: tests declare `let host: Host` filled in by beforeEach and tear down with `host?.stop()`, which is
      // right exactly when the type is not (a setup that threw).
      '@typescript-eslint/no-unnecessary-condition': [
        'error',
        { allowConstantLoopConditions: 'only-allowed-literals' },
      ],
    },
  },
);
