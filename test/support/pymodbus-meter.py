"""An SDM630-like energy meter on Debian's python3-pymodbus (3.0.x): a Modbus implementation we did not write.

Serves the Eastron SDM630 input registers chargegate reads (float32, high word first) for one or more unit ids,
over Modbus TCP, RTU over TCP, or RTU on a serial device. Takes commands as JSON lines on stdin and answers each
with {"ok": true} on stdout once applied, so a test knows the next request sees the new values:

  {"unit": 1, "currentA": [16, 16, 16], "powerW": 11040, "energyKWh": 1000.5}
  {"unit": 1, "registers": {"72": [32704, 0]}}    raw input registers, e.g. a NaN in the energy register
  {"unit": 1, "online": false}                     the unit stops answering: requests to it time out

Run with /usr/bin/python3 (Debian's interpreter, where python3-pymodbus lives):
  --tcp HOST:PORT | --rtu-over-tcp HOST:PORT | --rtu DEVICE [--baud 9600] [--units 1,2]
The first stdout line is {"ready": true, "port": N} (N is 0 for a serial device).
"""
import argparse
import asyncio
import json
import sys

from pymodbus.constants import Endian
from pymodbus.datastore import ModbusSequentialDataBlock, ModbusServerContext, ModbusSlaveContext
from pymodbus.framer.rtu_framer import ModbusRtuFramer
from pymodbus.framer.socket_framer import ModbusSocketFramer
from pymodbus.payload import BinaryPayloadBuilder
from pymodbus.server.async_io import ModbusSerialServer, ModbusTcpServer

# Eastron SDM630 input registers (0-based addresses of 30007, 30009, 30011, 30053, 30073).
CURRENT_REGISTERS = (0x0006, 0x0008, 0x000A)
POWER_REGISTER = 0x0034
ENERGY_REGISTER = 0x0048
INPUT_REGISTERS = 0x0050
READ_INPUT_REGISTERS = 4


def float_registers(value):
    builder = BinaryPayloadBuilder(byteorder=Endian.Big, wordorder=Endian.Big)
    builder.add_32bit_float(float(value))
    return builder.to_registers()


def apply(command, context, units):
    unit = int(command.get("unit", 1))
    slave = units[unit]
    if "online" in command:
        if command["online"] and unit not in context:
            context[unit] = slave
        elif not command["online"] and unit in context:
            del context[unit]
    for phase, current in enumerate(command.get("currentA", [])):
        slave.setValues(READ_INPUT_REGISTERS, CURRENT_REGISTERS[phase], float_registers(current))
    if "powerW" in command:
        slave.setValues(READ_INPUT_REGISTERS, POWER_REGISTER, float_registers(command["powerW"]))
    if "energyKWh" in command:
        slave.setValues(READ_INPUT_REGISTERS, ENERGY_REGISTER, float_registers(command["energyKWh"]))
    for address, words in command.get("registers", {}).items():
        slave.setValues(READ_INPUT_REGISTERS, int(address), [int(w) for w in words])


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def serve(args):
    units = {
        unit: ModbusSlaveContext(ir=ModbusSequentialDataBlock(0, [0] * INPUT_REGISTERS), zero_mode=True)
        for unit in (int(u) for u in args.units.split(","))
    }
    context = ModbusServerContext(slaves=dict(units), single=False)
    if args.rtu:
        server = ModbusSerialServer(context, framer=ModbusRtuFramer, port=args.rtu, baudrate=args.baud, ignore_missing_slaves=True)
        await server.start()
        port = 0
    else:
        host, port = (args.tcp or args.rtu_over_tcp).rsplit(":", 1)
        framer = ModbusSocketFramer if args.tcp else ModbusRtuFramer
        server = ModbusTcpServer(context, framer=framer, address=(host, int(port)), ignore_missing_slaves=True, allow_reuse_address=True)
        asyncio.create_task(server.serve_forever())
        await server.serving
        port = server.server.sockets[0].getsockname()[1]
    say({"ready": True, "port": port})

    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            break
        try:
            apply(json.loads(line), context, units)
            say({"ok": True})
        except Exception as exc:  # a bad command is reported to the test, the meter keeps serving
            say({"ok": False, "error": repr(exc)})
    await server.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--tcp")
    where.add_argument("--rtu-over-tcp")
    where.add_argument("--rtu")
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--units", default="1")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
