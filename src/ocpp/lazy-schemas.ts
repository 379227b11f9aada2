import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** ocpp-rpc's validators as its server and client use them: a subprotocol and a validate(schemaId, params). */
interface SchemaValidator {
  subprotocol: string;
  validate(schemaId: string, params: unknown): boolean;
}

const SCHEMAS: Array<[subprotocol: string, file: string]> = [
  ['ocpp1.6', 'ocpp-rpc/lib/schemas/ocpp1_6.json'],
  ['ocpp2.0.1', 'ocpp-rpc/lib/schemas/ocpp2_0_1.json'],
  ['ocpp2.1', 'ocpp-rpc/lib/schemas/ocpp2_1.json'],
];

/**
 * ocpp-rpc reads the schemas of every subprotocol it knows (1.6, 2.0.1, 2.1: 1.6 MB of JSON, each checked against
 * Ajv's meta-schema) the moment it is loaded: about 18 MB of memory a gateway with only 1.6 stations never uses.
 * Before it loads, its list of standard validators (lib/standard-validators.js) is put in the module cache as the
 * same validators made on first use: the same schema files, ocpp-rpc's own createValidator, so strict mode checks
 * exactly what it would have checked. This is the one place chargegate reaches into ocpp-rpc's files (it has no
 * option for it); test/ocpp/lazy-schemas.test.ts shows 2.0.1 is read only when a 2.0.1 station calls. Loaded
 * after ocpp-rpc (another module imported it first), it changes nothing.
 */
export function loadOcppRpc(): typeof import('ocpp-rpc') {
  const validatorsPath = require.resolve('ocpp-rpc/lib/standard-validators.js');
  if (!require.cache[validatorsPath]) {
    const { createValidator } = require('ocpp-rpc/lib/validator.js') as {
      createValidator(subprotocol: string, schema: object): SchemaValidator;
    };
    const lazy = ([subprotocol, file]: [string, string]): SchemaValidator => {
      let validator: SchemaValidator | undefined;
      return {
        subprotocol,
        validate: (schemaId, params) =>
          (validator ??= createValidator(subprotocol, require(file) as object)).validate(schemaId, params),
      };
    };
    const standard = new Module(validatorsPath);
    standard.filename = validatorsPath;
    standard.loaded = true;
    standard.exports = SCHEMAS.map(lazy);
    require.cache[validatorsPath] = standard;
  }
  return require('ocpp-rpc') as typeof import('ocpp-rpc');
}
