import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O & typeof HELP; args: string[] }>
>['values'];

/**
 * A script's command line (simulators, the demo receiver): `convert` turns the parsed values into what the script
 * needs and throws an Error whose message names the option for a bad value. Returns that, or the exit code to stop
 * with: 0 after printing the usage for --help, 2 after one line and the usage on stderr for any mistake (never a
 * stack trace).
 */
export function scriptArguments<O extends ParseArgsOptionsConfig, R>(
  usage: string,
  options: O,
  convert: (values: Values<O>) => R,
  argv = process.argv.slice(2),
): R | number {
  try {
    const { values } = parseArgs({ args: argv, options: { ...options, ...HELP } });
    if ((values as { help?: boolean }).help) {
      console.log(usage);
      return 0;
    }
    return convert(values);
  } catch (err) {
    console.error(`${(err as Error).message}\n${usage}`);
    return 2;
  }
}
