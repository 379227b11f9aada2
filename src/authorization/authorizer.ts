import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { AuthorizationStatus, StationRegistry, Transactions } from '../site/index.js';
import type { Writer } from '../store/index.js';
import { findCsmsIdTag } from './csms-id-tags.js';
import { findIdTag } from './id-tags.js';
import { loadPlugin, pluginVersion, type AuthorizationPlugin } from './plugin.js';
import {
  createUpstreamLink,
  lastUpstreamDecision,
  rememberUpstreamDecision,
  type UpstreamConnect,
  type UpstreamLink,
} from './upstream.js';

export interface AuthorizationRequest {
  idTag: string;
  stationId: string;
  /** Given at StartTransaction; absent for a plain Authorize. */
  connectorId?: number;
  /** The transaction this request belongs to (a repeated StartTransaction): not counted as concurrent. */
  transactionId?: number;
  /** A 2.0.1 station's token type (ISO14443, eMAID, ...): a CSMS asked over the station's 2.0.1 uplink needs it. */
  idTokenType?: string;
}

/** Which step of the chain decided (logged with every decision). */
export type DecisionSource = 'plugin' | 'local' | 'upstream' | 'upstream-cache' | 'default';

export interface AuthorizationDecision {
  status: AuthorizationStatus;
  source: DecisionSource;
  siteId: string;
  expiryDate?: string;
  parentIdTag?: string;
  /** The connector of the tag's transaction in progress at this station, if any (interface 2.3 connectorId). */
  connectorId?: number;
}

/** What the chain needs to know about the site's state. */
export interface AuthorizationSite {
  stations: Pick<StationRegistry, 'siteOf'>;
  transactions: Pick<Transactions, 'openOfTag'>;
}

export interface AuthorizerOptions {
  /** Reads the local list and writes the upstream decision cache (the daemon's group commit). */
  writer: Writer;
  config: () => Config;
  site: AuthorizationSite;
  logger: Logger;
  connectUpstream: UpstreamConnect;
  now?: () => Date;
}

export interface Authorizer {
  authorize(request: AuthorizationRequest): Promise<AuthorizationDecision>;
  /**
   * Decides and then calls `start` with the decision in the same synchronous turn as the ConcurrentTx check, so two
   * StartTransactions with one tag cannot both pass the check before either has committed its transaction.
   */
  authorizeStart<T>(
    request: AuthorizationRequest,
    start: (decision: AuthorizationDecision) => T,
  ): Promise<{ decision: AuthorizationDecision; started: T }>;
  /**
   * Loads a changed plugin or upstream setting; throws PluginLoadError and keeps the old chain when the new plugin
   * cannot load.
   */
  reload(config: Config): Promise<void>;
  close(): Promise<void>;
}

/**
 * The decision chain (docs/install/connecting-stations.md#connecting-a-station, who may charge): plugin, local idTag list (the installer's entries,
 * then the CSMS's for the station), upstream CPO (falling back to its last answer for the tag), default Invalid; then
 * ConcurrentTx when the tag already charges elsewhere.
 */
export async function createAuthorizer(options: AuthorizerOptions): Promise<Authorizer> {
  const { writer, site, logger } = options;
  const { db } = writer;
  const now = options.now ?? (() => new Date());
  let plugin: AuthorizationPlugin | undefined;
  let pluginKey = '';
  let upstream: { link: UpstreamLink; key: string } | undefined;

  const configure = async (config: Config): Promise<void> => {
    const { plugin: pluginPath, pluginTimeoutMs } = config.authorization;
    const nextPluginKey = pluginPath ? `${pluginVersion(pluginPath)}\u0000${pluginTimeoutMs}` : '';
    if (nextPluginKey !== pluginKey) {
      plugin = pluginPath ? await loadPlugin(pluginPath, pluginTimeoutMs) : undefined;
      pluginKey = nextPluginKey;
    }
    // Under the uplink (upstream.csms), connectUpstream asks the CSMS over the station's uplink connection.
    const url = config.upstream?.url ?? config.upstream?.csms?.url;
    const upstreamKey = url ? `${url}\u0000${config.upstream?.timeoutMs}` : '';
    if (upstreamKey !== (upstream?.key ?? '')) {
      await upstream?.link.close();
      upstream =
        url && config.upstream
          ? {
              key: upstreamKey,
              link: createUpstreamLink({
                url,
                timeoutMs: config.upstream.timeoutMs,
                logger,
                connect: options.connectUpstream,
              }),
            }
          : undefined;
    }
  };
  await configure(options.config());

  const baseDecision = async (
    request: AuthorizationRequest,
    siteId: string,
  ): Promise<Omit<AuthorizationDecision, 'siteId' | 'connectorId'>> => {
    if (plugin) {
      const outcome = await plugin.decide({
        idTag: request.idTag,
        stationId: request.stationId,
        connectorId: request.connectorId,
        siteId,
      });
      if (outcome.kind === 'answered') return { status: outcome.status, source: 'plugin' };
      if (outcome.kind === 'failed')
        logger.error(
          { stationId: request.stationId, siteId, plugin: plugin.path, reason: outcome.reason },
          'authorization plugin failed; passing to the local list',
        );
    }
    // The installer's entry first, then the one the CSMS gave this station (docs/design/uplink.md#uplink-what-the-csms-sees).
    const local = findIdTag(db, request.idTag, siteId) ?? findCsmsIdTag(db, request.idTag, request.stationId);
    if (local) {
      const expired = local.expiresAt !== null && Date.parse(local.expiresAt) <= now().getTime();
      return {
        status: expired && local.status === 'Accepted' ? 'Expired' : local.status,
        source: 'local',
        ...(local.expiresAt !== null && { expiryDate: local.expiresAt }),
        ...('parentIdTag' in local && local.parentIdTag !== null && { parentIdTag: local.parentIdTag }),
      };
    }
    if (upstream) {
      const answer = await upstream.link.authorize(request.stationId, request.idTag, request.idTokenType);
      if (answer) {
        rememberUpstreamDecision(writer, request.idTag, answer, now());
        return { ...answer, source: 'upstream' };
      }
      const cached = lastUpstreamDecision(db, request.idTag);
      if (cached) {
        const expired = cached.expiryDate !== undefined && Date.parse(cached.expiryDate) <= now().getTime();
        return {
          ...cached,
          status: expired && cached.status === 'Accepted' ? 'Expired' : cached.status,
          source: 'upstream-cache',
        };
      }
    }
    return { status: 'Invalid', source: 'default' };
  };

  /** The chain's answer plus ConcurrentTx: synchronous, so a caller can commit in the same turn. */
  const settle = (
    request: AuthorizationRequest,
    siteId: string,
    base: Omit<AuthorizationDecision, 'siteId' | 'connectorId'>,
  ): AuthorizationDecision => {
    const open = site.transactions.openOfTag(request.idTag).filter((t) => t.id !== request.transactionId);
    const here = open.find((t) => t.stationId === request.stationId);
    const concurrent =
      base.status === 'Accepted' && open.length > 0 && !options.config().authorization.allowConcurrentTx;
    const decision: AuthorizationDecision = {
      ...base,
      siteId,
      ...(concurrent && { status: 'ConcurrentTx' }),
      ...(here && request.connectorId === undefined && { connectorId: here.connectorId }),
    };
    logger.info(
      {
        stationId: request.stationId,
        siteId,
        idTag: request.idTag,
        connectorId: request.connectorId,
        status: decision.status,
        source: decision.source,
      },
      'authorization decided',
    );
    return decision;
  };

  const authorizeStart: Authorizer['authorizeStart'] = async (request, start) => {
    const siteId = site.stations.siteOf(request.stationId);
    const base = await baseDecision(request, siteId);
    const decision = settle(request, siteId, base);
    return { decision, started: start(decision) };
  };

  return {
    authorize: async (request) => (await authorizeStart(request, () => undefined)).decision,
    authorizeStart,
    reload: configure,
    async close() {
      await upstream?.link.close();
      upstream = undefined;
    },
  };
}
