import './stations-schemas.js';

/** How openapi.ts words a schema reference, a JSON response, an error response, and the Bearer errors. */
export interface OpenApiWords {
  ref(id: string): object;
  json(schema: object, description: string): object;
  error(description: string): object;
  bearerErrors: Record<string, object>;
}

/** The stations API's paths (contract 11.1) for GET /openapi.json; the schemas come from stations-schemas.ts. */
export function stationPaths({ ref, json, error, bearerErrors }: OpenApiWords): Record<string, unknown> {
  const read = [{ bearer: [] }, { oauth2: ['stations:read'] }];
  const operate = [{ bearer: [] }, { oauth2: ['stations:operate'] }];
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const notFound = error(
    "No such station, or one the application's groups do not reach (a company, site or station grant)",
  );
  const readRefused = error('The application lacks stations:read');
  const answers = {
    '200': json(
      ref('StationOperationAnswer'),
      'The station did what it was asked (Accepted, Unlocked, Scheduled, RebootRequired), or answered the read',
    ),
    '400': error(
      'Invalid path, query or body; a connector the station does not have, a 2.0.1 key not in Component.Variable form, a message the protocol cannot trigger',
    ),
    ...bearerErrors,
    '403': error('The application lacks stations:operate'),
    '404': notFound,
    '409': error(
      "`station_refused`: the station refused (Rejected, UnlockFailed, NotSupported, a CALLERROR code, ...); the body has the answer's fields too. `no_base_report`: a 2.0.1 read without keys before any base report",
    ),
    '429': error('`station_busy`: 16 operations already wait for this station'),
    '503': error('`station_offline`: the station is not connected'),
    '504': error('`station_timeout`: no answer within 2 x ocpp.callTimeoutMs of the request, waiting included'),
  };
  const operation = (operationId: string, summary: string, body?: string) => ({
    post: {
      operationId,
      summary,
      security: operate,
      parameters: [idParameter],
      ...(body && { requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } } }),
      responses: answers,
    },
  });
  return {
    '/stations': {
      get: {
        operationId: 'listStations',
        summary:
          "The stations the application's groups reach: what each is (its last BootNotification), its connectors",
        security: read,
        responses: { '200': json(ref('StationList'), 'Stations'), ...bearerErrors, '403': readRefused },
      },
    },
    '/stations/{id}': {
      get: {
        operationId: 'getStation',
        summary: 'One station, its last 50 operations and (2.0.1) its last base report',
        security: read,
        parameters: [idParameter],
        responses: {
          '200': json(ref('StationDetail'), 'The station'),
          ...bearerErrors,
          '403': readRefused,
          '404': notFound,
        },
      },
    },
    '/stations/{id}/reset': operation(
      'resetStation',
      'Reset: 1.6 Soft/Hard, 2.0.1 OnIdle/Immediate',
      'StationResetRequest',
    ),
    '/stations/{id}/unlock': operation('unlockConnector', 'UnlockConnector', 'StationUnlockRequest'),
    '/stations/{id}/availability': operation(
      'changeAvailability',
      'ChangeAvailability of the station or a connector (2.0.1: its EVSE)',
      'StationAvailabilityRequest',
    ),
    '/stations/{id}/trigger': operation('triggerMessage', 'TriggerMessage', 'StationTriggerRequest'),
    '/stations/{id}/clear-cache': operation('clearCache', 'ClearCache: the station forgets its authorization cache'),
    '/stations/{id}/report': operation(
      'getBaseReport',
      '2.0.1: GetBaseReport FullInventory (the NotifyReport parts show in GET /stations/{id}); 1.6: GetConfiguration of every key',
    ),
    '/stations/{id}/configuration': {
      get: {
        operationId: 'getStationConfiguration',
        summary:
          '1.6 GetConfiguration; 2.0.1 GetVariables (attribute Actual), or without keys the variables of the last base report',
        security: read,
        parameters: [
          idParameter,
          {
            name: 'key',
            in: 'query',
            required: false,
            schema: { type: 'array', items: { type: 'string' } },
            style: 'form',
            explode: true,
            description: '1.6: a key; 2.0.1: Component.Variable or Component[evse].Variable. Repeat for several',
          },
        ],
        responses: { ...answers, '403': readRefused },
      },
      put: {
        operationId: 'setStationConfiguration',
        summary: '1.6 ChangeConfiguration; 2.0.1 SetVariables (attribute Actual)',
        security: operate,
        parameters: [idParameter],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('StationConfigurationSetRequest') } },
        },
        responses: answers,
      },
    },
  };
}
