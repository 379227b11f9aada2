/**
 * Station exchanges that the stations API tests and the CLI tests both drive: what chargegate sends the station,
 * what the station answers, and the status and result the caller gets.
 */
export const CONFIG_GET_16 = {
  sent: { key: ['HeartbeatInterval', 'Nonsense'] },
  done: {
    answer: {
      configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }],
      unknownKey: ['Nonsense'],
    },
    status: 'Accepted',
    result: {
      configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }],
      unknownKey: ['Nonsense'],
    },
  },
};

export const CONFIG_GET_201 = {
  sent: {
    getVariableData: [
      { component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' }, attributeType: 'Actual' },
      { component: { name: 'EVSE', evse: { id: 2 } }, variable: { name: 'Power' }, attributeType: 'Actual' },
    ],
  },
  done: {
    answer: {
      getVariableResult: [
        {
          attributeStatus: 'Accepted',
          attributeValue: '300',
          component: { name: 'OCPPCommCtrlr' },
          variable: { name: 'HeartbeatInterval' },
        },
        {
          attributeStatus: 'UnknownVariable',
          component: { name: 'EVSE', evse: { id: 2 } },
          variable: { name: 'Power' },
        },
      ],
    },
    status: 'Accepted',
    result: {
      configurationKey: [{ key: 'OCPPCommCtrlr.HeartbeatInterval', value: '300' }],
      unknownKey: ['EVSE[2].Power'],
    },
  },
};

export const CONFIG_SET_201 = {
  sent: {
    setVariableData: [
      {
        attributeType: 'Actual',
        attributeValue: '60',
        component: { name: 'OCPPCommCtrlr' },
        variable: { name: 'HeartbeatInterval' },
      },
    ],
  },
  done: {
    answer: {
      setVariableResult: [
        {
          attributeStatus: 'Accepted',
          component: { name: 'OCPPCommCtrlr' },
          variable: { name: 'HeartbeatInterval' },
        },
      ],
    },
    status: 'Accepted',
  },
  refused: {
    answer: {
      setVariableResult: [
        {
          attributeStatus: 'Rejected',
          attributeStatusInfo: { reasonCode: 'ValueTooLow' },
          component: { name: 'OCPPCommCtrlr' },
          variable: { name: 'HeartbeatInterval' },
        },
      ],
    },
    status: 'Rejected',
  },
};
