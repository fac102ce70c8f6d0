import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { Channel, NotificationTemplatesTable, RecipientType, TemplateType } from '../../platform/database/schema.js';

export type TemplateRow = Selectable<NotificationTemplatesTable>;

export interface TemplateFilter {
  channel?: Channel | undefined;
  type?: TemplateType | undefined;
  recipientType?: RecipientType | undefined;
}

export interface TemplateWrite {
  id: string;
  type: TemplateType;
  recipientType: RecipientType;
  channel: Channel;
  subject: string;
  body: string;
}

export function createTemplateRepository(db: Db) {
  return {
    list(companyId: string, filter: TemplateFilter) {
      let query = db.selectFrom('notificationTemplates').selectAll().where('companyId', '=', companyId);
      if (filter.channel) query = query.where('channel', '=', filter.channel);
      if (filter.type) query = query.where('type', '=', filter.type);
      if (filter.recipientType) query = query.where('recipientType', '=', filter.recipientType);
      return query.orderBy('type').orderBy('recipientType').orderBy('channel').execute();
    },

    /** The company's templates of one type and recipient, every channel (at most one per channel). */
    forRecipient(companyId: string, type: TemplateType, recipientType: RecipientType) {
      return db
        .selectFrom('notificationTemplates')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('type', '=', type)
        .where('recipientType', '=', recipientType)
        .execute();
    },

    /**
     * Insert, or update the row with the same (company, type, recipientType, channel): one
     * statement, so two concurrent saves never both insert. `inserted` is PostgreSQL's
     * `xmax = 0`, true only for a row this statement created.
     */
    upsert(companyId: string, write: TemplateWrite) {
      const now = new Date();
      return db
        .insertInto('notificationTemplates')
        .values({ companyId, ...write, createdAt: now, updatedAt: now })
        .onConflict((oc) =>
          oc.columns(['companyId', 'type', 'recipientType', 'channel']).doUpdateSet({ subject: write.subject, body: write.body, updatedAt: now }),
        )
        .returningAll()
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
    },

    async remove(companyId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('notificationTemplates').where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type TemplateRepository = ReturnType<typeof createTemplateRepository>;
