import { Type } from '@sinclair/typebox';
import { Uuid } from '../../platform/http/schemas.js';

export const Password = Type.String({ minLength: 8, maxLength: 256, description: '8 to 256 characters, not one of the most common passwords' });

export const User = Type.Object({
  id: Uuid(),
  email: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

export const DashboardSession = Type.Object({
  accessToken: Type.String({ description: 'The dashboard JWT' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Seconds' }),
});
