/**
 * A simulated energy meter for trying chargegate's Modbus side by hand: real Modbus TCP (or RTU on a serial
 * device) with a built-in model's register map, cycling between idle and a charging session. It prints the
 * `meters:` entry to put in the config, and each phase change.
 *
 *   npm run simulate:meter -- [--host 127.0.0.1] [--port 5020] [--rtu /dev/pts/N [--baud 9600] [--peer DEVICE]]
 *                             [--model sdm630] [--unit 1] [--idle-s 15] [--charge-s 30] [--amps 16]
 *                             [--energy-kwh 1000]
 *
 * A pseudo-terminal pair for RTU without hardware:
 *   socat -d -d pty,raw,echo=0,link=/tmp/meter-tty pty,raw,echo=0,link=/tmp/chargegate-tty
 *   npm run simulate:meter -- --rtu /tmp/meter-tty --peer /tmp/chargegate-tty
 */
import { setTimeout as delay } from 'node:timers/promises';
import { METER_MODELS, type MeterModel } from '../src/modbus/index.js';
import { MeterSimulator } from '../test/support/meter-simulator.js';
import { scriptArguments } from './command-line.js';

const USAGE =
  'usage: meter-simulator [--host H] [--port N] [--rtu DEVICE [--baud N] [--peer DEVICE]] [--model sdm630|sdm120|abb-b23|em340] [--unit N] [--idle-s S] [--charge-s S] [--amps A] [--energy-kwh KWH]';
const VOLTS = 230;

function positive(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name}: a number of 0 or more, not "${text}"`);
  return value;
}

async function main(): Promise<number> {
  const options = scriptArguments(
    USAGE,
    {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '5020' },
      rtu: { type: 'string' },
      // The device chargegate opens: the other end of a socat pair, or the gateway's serial port.
      peer: { type: 'string' },
      baud: { type: 'string', default: '9600' },
      model: { type: 'string', default: 'sdm630' },
      unit: { type: 'string', default: '1' },
      'idle-s': { type: 'string', default: '15' },
      'charge-s': { type: 'string', default: '30' },
      amps: { type: 'string', default: '16' },
      'energy-kwh': { type: 'string', default: '1000' },
    },
    (values) => {
      if (!(values.model in METER_MODELS))
        throw new Error(`--model: one of ${Object.keys(METER_MODELS).join(', ')}, not "${values.model}"`);
      return {
        ...values,
        model: values.model as Exclude<MeterModel, 'custom'>,
        port: positive('port', values.port),
        baud: positive('baud', values.baud),
        unit: positive('unit', values.unit),
        idleS: positive('idle-s', values['idle-s']),
        chargeS: positive('charge-s', values['charge-s']),
        amps: positive('amps', values.amps),
        energyKWh: positive('energy-kwh', values['energy-kwh']),
      };
    },
  );
  if (typeof options === 'number') return options;

  const map = METER_MODELS[options.model];
  const units = { [options.unit]: map };
  const meter = options.rtu
    ? await MeterSimulator.rtu({ device: options.rtu, baudRate: options.baud, units })
    : await MeterSimulator.tcp({ host: options.host, port: options.port, units });
  const connection = options.rtu
    ? `{ type: rtu, device: ${options.peer ?? '/dev/ttyUSB0'}, baudRate: ${options.baud}, unitId: ${options.unit} }`
    : `{ type: tcp, host: ${options.host}, port: ${meter.port}, unitId: ${options.unit} }`;
  // Indented for a site entry of the config: paste it under `- id: <your site>`, beside `stations:`.
  console.log(
    `simulated ${map.name} answering on ${options.rtu ?? `tcp://${options.host}:${meter.port}`} unit ${options.unit}; config entry (paste under a site):`,
  );
  console.log(
    `    meters:\n      - { id: meter-sim, chargePointId: MB-SIM, connectorId: 1, model: ${options.model}, connection: ${connection} }`,
  );
  if (options.rtu && !options.peer)
    console.log('    # device: the serial port chargegate reads; --peer names it (the other end of a socat pair)');

  let stopping = false;
  const stop = () => (stopping = true);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const phases = map.currentA.length;
  let energyKWh = options.energyKWh;
  while (!stopping) {
    await meter.set(options.unit, { energyKWh, currentA: Array(phases).fill(0), powerW: 0 });
    console.log(`${new Date().toISOString()} idle at ${energyKWh.toFixed(3)} kWh for ${options.idleS} s`);
    for (let s = 0; s < options.idleS && !stopping; s++) await delay(1000);
    const powerW = options.amps * VOLTS * phases;
    console.log(
      `${new Date().toISOString()} charging ${options.amps} A on ${phases} phase${phases === 1 ? '' : 's'} (${powerW} W) for ${options.chargeS} s`,
    );
    for (let s = 0; s < options.chargeS && !stopping; s++) {
      await meter.set(options.unit, { energyKWh, currentA: Array(phases).fill(options.amps), powerW });
      await delay(1000);
      energyKWh += powerW / 3_600_000;
    }
  }
  await meter.close();
  return 0;
}

process.exitCode = await main();
