import { Type } from '@sinclair/typebox'
import { Id } from '@fleetgate/device-agent/protocol'
import { DeviceRecord } from '../devices/device-schemas.js'

const LabelMap = Type.Record(Type.String(), Type.String(), { description: 'Labels: keys 1–63 of [a-z0-9._/-] (letter or digit at both ends), values 0–63 of [A-Za-z0-9._-]; at most 32' })

export const Selector = Type.String({
  maxLength: 4096,
  description: 'Label selector (§15): comma-separated requirements, e.g. `site=sz,line in (l1,l2),!retired,@online=true`; empty = every machine',
})

export const LabelsReplaceBody = Type.Object({ labels: LabelMap }, { additionalProperties: false })

export const LabelsMergeBody = Type.Object(
  { labels: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), { description: 'Keys to set; a null value removes the key' }) },
  { additionalProperties: false },
)

export const LabelsAnswer = Type.Object({ success: Type.Boolean(), device: DeviceRecord })

export const BulkLabelsBody = Type.Object(
  {
    selector: Type.Optional(Selector),
    devices: Type.Optional(Type.Array(Id('Device id'), { maxItems: 100_000, description: 'The machines, by id (instead of a selector)' })),
    set: Type.Optional(LabelMap),
    remove: Type.Optional(Type.Array(Type.String(), { maxItems: 32, description: 'Keys to remove' })),
  },
  { additionalProperties: false },
)

export const BulkLabelsAnswer = Type.Object({
  success: Type.Boolean(),
  matched: Type.Integer({ description: 'Machines the selector or the ids named' }),
  changed: Type.Integer({ description: 'Of those, machines whose labels changed' }),
})

export const LabelKeysAnswer = Type.Object({
  success: Type.Boolean(),
  keys: Type.Array(
    Type.Object({
      key: Type.String(),
      values: Type.Array(Type.Object({ value: Type.String(), devices: Type.Integer({ description: 'Machines carrying this value' }) }), {
        description: 'At most 100, most used first',
      }),
    }),
  ),
})
