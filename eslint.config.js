// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A folder of src/ is one part and its index.ts is its public face (README, Layout): a file `depth` folders below
 * src/ that climbs `depth` times has left its part, and may then name only another part's index.js. Within a part
 * (./x.js, a sub-folder's ../x.js) anything goes. test/ may reach inside: it tests parts from within.
 */
const otherPartsByIndexOnly = (depth) => ({
  files: [`src/${'*/'.repeat(depth)}*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\.\\./){${depth}}(?![^/]+/index\\.js$)`,
            message:
              "Another folder of src/ is imported by its index.js only; export what you need from that folder's index.ts.",
          },
        ],
      },
    ],
  },
});

export default tseslint.config(
  // The OCPP message types are generated from ocpp-rpc's schemas (npm run generate:ocpp-types).
  { ignores: ['dist/', 'node_modules/', 'var/', 'src/ocpp/v16/messages.ts', 'src/ocpp/v201/messages.ts'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its rejection: in a daemon that is a lost commit or an unlogged failure.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // `_name` marks what a destructuring leaves out on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // A `let` assigned once after a closure that reads it (a server's own URL) cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  { files: ['**/*.js'], extends: [tseslint.configs.disableTypeChecked] },
  // The status page's classic scripts share one global scope (browser/status.ts says why): each names what it gives
  // the others in an `exported` comment.
  { files: ['src/status-page/browser/*.ts'], languageOptions: { sourceType: 'script' } },
  // A hand-written file over 600 lines does several jobs: split it by concern (the generated messages.ts are ignored).
  { files: ['src/**/*.ts'], rules: { 'max-lines': ['error', { max: 600 }] } },
  // src/cli/commands/, src/modbus/models/, src/ocpp/v16/ are the deepest folders: add a depth when one nests further.
  otherPartsByIndexOnly(1),
  otherPartsByIndexOnly(2),
);
