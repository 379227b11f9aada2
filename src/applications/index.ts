export { Applications, ApplicationError, UnknownApplicationError, type Application } from './applications.js';
export {
  grantsOf,
  reaches,
  reachesSite,
  reachesStation,
  reachScope,
  scopeOf,
  type ChargePointLocation,
  type Grant,
  type ReachedIds,
} from './reach.js';
export {
  AccessTokenVerifier,
  InvalidAccessTokenError,
  issueAccessToken,
  type AccessTokenClaims,
} from './access-tokens.js';
