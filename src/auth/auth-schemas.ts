import { Type } from '@sinclair/typebox'

export const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 128 }),
})

export const WechatLoginBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 256 }),
  profile: Type.Optional(
    Type.Object({
      nickName: Type.Optional(Type.String({ maxLength: 128 })),
      avatarUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    }),
  ),
})

export const UserSchema = Type.Object({
  id: Type.String(),
  username: Type.String(),
  display_name: Type.String(),
  role: Type.String({ description: 'admin, user or wechat' }),
  avatar_url: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
})

export const TokenAnswer = Type.Object({
  success: Type.Boolean(),
  token: Type.String(),
  expires_in: Type.Integer({ description: 'Seconds' }),
  user: UserSchema,
})

export const LogoutAnswer = Type.Object({
  success: Type.Literal(true),
})
