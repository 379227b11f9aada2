import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { addImage, listImages, removeImage } from '../../firmware/index.js';
import { CliError, EXIT_USAGE, output, table, withContext, type GlobalOptions } from '../context.js';
import { registerFirmwareRollouts } from './firmware-rollouts.js';

/**
 * `chargegate firmware`: images stored in dataDir/firmware/ (add, list, remove: offline, beside a running daemon as
 * `idtag` is) and rollouts (rollout, status, cancel: the running daemon does them, reached over its local channel).
 * docs/operating/firmware-and-logs.md#firmware.
 */
export function registerFirmware(program: Command): void {
  const firmware = program.command('firmware').description('firmware images and their rollouts to the stations');

  firmware
    .command('add')
    .description(
      'store an image in dataDir/firmware/ (SHA-256 kept; bounded by firmware.maxImageBytes and maxTotalBytes)',
    )
    .argument('<file>')
    .option('--firmware-version <version>', 'the version the image installs (shown by firmware list and status)')
    .option('--signature <file>', "2.0.1: the image's signature (base64), sent as firmware.signature")
    .option('--signing-cert <file>', '2.0.1: the PEM certificate that signed it, sent as firmware.signingCertificate')
    .action(
      (file: string, options: { firmwareVersion?: string; signature?: string; signingCert?: string }, cmd: Command) =>
        withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
          if ((options.signature === undefined) !== (options.signingCert === undefined))
            throw new CliError('--signature and --signing-cert go together', EXIT_USAGE);
          const image = await addImage(ctx.db, ctx.config.dataDir, ctx.config.firmware, {
            file,
            ...(options.firmwareVersion !== undefined && { firmwareVersion: options.firmwareVersion }),
            ...(options.signature !== undefined && { signature: readText(options.signature, '--signature') }),
            ...(options.signingCert !== undefined && {
              signingCertificate: readText(options.signingCert, '--signing-cert'),
            }),
          });
          const { imageId, sha256, firmwareVersion } = image;
          output(
            ctx.json,
            { imageId, sha256, firmwareVersion },
            () => `${imageId}  ${image.fileName}, ${image.size} bytes, sha256 ${sha256}`,
          );
        }),
    );

  firmware
    .command('list')
    .description('the images stored')
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const images = listImages(ctx.db);
        output(ctx.json, { images }, () =>
          table(
            ['ID', 'FILE', 'BYTES', 'VERSION', 'SIGNED', 'ADDED', 'SHA-256'],
            images.map((i) => [
              i.imageId,
              i.fileName,
              String(i.size),
              i.firmwareVersion ?? '-',
              i.signature ? 'yes' : '',
              i.addedAt,
              i.sha256,
            ]),
          ),
        );
      }),
    );

  firmware
    .command('remove')
    .description('remove an image (refused while a rollout that uses it is not finished)')
    .argument('<imageId>')
    .action((imageId: string, _options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        removeImage(ctx.db, ctx.config.dataDir, imageId);
        output(ctx.json, { imageId, removed: true }, () => `${imageId} removed`);
      }),
    );

  registerFirmwareRollouts(firmware);
}

function readText(file: string, option: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new CliError(`${option}: cannot read ${file}: ${(err as Error).message}`, EXIT_USAGE);
  }
}
