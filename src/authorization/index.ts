export {
  createAuthorizer,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type AuthorizationSite,
  type Authorizer,
  type AuthorizerOptions,
  type DecisionSource,
} from './authorizer.js';
export {
  LOCAL_TAG_STATUSES,
  MAX_ID_TAG_LENGTH,
  findIdTag,
  listIdTags,
  putIdTag,
  removeIdTag,
  type IdTag,
  type LocalTagStatus,
} from './id-tags.js';
export {
  applyCsmsLocalList,
  csmsLocalListVersion,
  listCsmsIdTags,
  type CsmsIdTag,
  type CsmsLocalList,
} from './csms-id-tags.js';
export { PluginLoadError, type PluginRequest } from './plugin.js';
export type { UpstreamClient, UpstreamConnect, UpstreamDecision } from './upstream.js';
