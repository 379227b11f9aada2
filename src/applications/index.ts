export { Applications, ApplicationError, type Application } from './applications.js';
export { grantsOf, reaches, scopeOf, parseScope, covers, type ChargePointLocation, type Grant, type ScopeLevel } from './reach.js';
export { AccessTokenVerifier, InvalidAccessTokenError, issueAccessToken, type AccessTokenClaims } from './access-tokens.js';
