import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EmbeddingRepository } from '../embeddings/embedding.repository.js';
import { EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import type { EmbeddedTexts, QueryVector } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { LegacyException } from '../legacies/legacy.exception.js';
import { UpdateProfileInput } from './dto/profile.inputs.js';
import type { ProfileModel } from './models/profile.model.js';
import {
  cleanList,
  cleanParagraphs,
  cleanText,
  entryKey,
  entryText,
  isPlausibleBirthday,
  parseEntryKey,
  ProfileField,
  ProfileValue,
} from './profile-fields.js';
import type { ProfileEntity } from './profile.entity.js';
import { ProfileException } from './profile.exception.js';
import {
  PROFILE_KIND,
  ProfileEntryRow,
  ProfileRepository,
  UsableEntry,
} from './profile.repository.js';

/** One field set to a value, or cleared (value null). */
interface EntryChange {
  field: ProfileField;
  legacyId: string | null;
  value: ProfileValue | null;
}

/** An entry written with the vectors made for its text before the transaction. */
interface Embedded {
  key: string;
  text: string;
  vectors: EmbeddedTexts[];
}

/**
 * The rules of a member's profile. Only its member reads or changes it: every method takes the
 * caller and touches their rows alone. Storing is their explicit act and needs no consent;
 * reading it into a context or recall, and embedding it (which may send it to an embedding
 * service), needs consent. Turning consent off deletes the content and its vectors at once.
 */
@Injectable()
export class ProfilesService {
  constructor(
    private readonly repo: ProfileRepository,
    private readonly legacies: LegaciesService,
    private readonly embeddings: EmbeddingService,
    private readonly vectors: EmbeddingRepository,
  ) {}

  async get(user: UserEntity): Promise<ProfileModel> {
    const [profile, entries] = await Promise.all([
      this.repo.find(user.id),
      this.repo.entries(user.id),
    ]);
    return toModel(profile, entries);
  }

  async update(user: UserEntity, input: UpdateProfileInput): Promise<ProfileModel> {
    const changes = await this.changesOf(user, input);
    const [profile, current] = await Promise.all([
      this.repo.find(user.id),
      this.repo.entries(user.id),
    ]);
    // Embedded before the transaction (a model call), and only the texts that changed.
    const known = new Map(current.map((e) => [entryKey(e.field, e.legacyId), e.text]));
    const toEmbed = changes
      .filter((c) => c.value !== null)
      .map((c) => ({ key: entryKey(c.field, c.legacyId), text: entryText(c.field, c.value!) }))
      .filter((c) => known.get(c.key) !== c.text);
    const embedded = profile?.consent ? await this.embed(toEmbed) : [];
    await this.repo.transaction(async (m) => {
      const locked = await this.repo.lock(m, user.id);
      for (const change of changes) {
        if (change.value === null) {
          await this.repo.deleteEntry(m, user.id, change.field, change.legacyId);
          continue;
        }
        const text = entryText(change.field, change.value);
        const id = await this.repo.upsertEntry(m, {
          userId: user.id,
          field: change.field,
          legacyId: change.legacyId,
          value: change.value,
          text,
        });
        if (!id) continue;
        // The old text's vector must not answer for the new one.
        await this.vectors.deleteItems(PROFILE_KIND, [id], m);
        const key = entryKey(change.field, change.legacyId);
        const ready = embedded.find((e) => e.key === key && e.text === text);
        // Consent may have been turned off since it was read: then nothing is embedded.
        if (locked.consent && ready) await this.storeVectors(m, user.id, id, change, ready);
      }
      await this.repo.touch(m, user.id);
    });
    return this.get(user);
  }

  /**
   * Consent on: the profile is embedded now (the sweeper finishes whatever the model could not
   * take). Consent off: every entry and vector is deleted in the same transaction, whether or
   * not consent was on, so that off always means an empty profile.
   */
  async setConsent(user: UserEntity, consent: boolean): Promise<ProfileModel> {
    const wasOn = await this.repo.transaction(async (m) => {
      const before = await this.repo.lock(m, user.id);
      if (!consent) await this.repo.deleteEverything(m, user.id);
      await this.repo.setConsent(m, user.id, consent);
      return before.consent;
    });
    // Already on: the profile was embedded then, and on every save since.
    if (consent && !wasOn) await this.embedAll(user.id);
    return this.get(user);
  }

  /** Forgets one entry from recall (`interests`, `relationship:<legacyId>`): deleted now. */
  async forget(user: UserEntity, key: string): Promise<void> {
    const parsed = parseEntryKey(key);
    if (!parsed) throw ProfileException.entryNotFound();
    const deleted = await this.repo.transaction(async (m) => {
      await this.repo.lock(m, user.id);
      const gone = await this.repo.deleteEntry(m, user.id, parsed.field, parsed.legacyId);
      if (gone) await this.repo.touch(m, user.id);
      return gone;
    });
    if (!deleted) throw ProfileException.entryNotFound();
  }

  /** The entries a context or recall about the legacy may read now (none without consent). */
  usable(userId: string, legacyId: string, query: QueryVector | null): Promise<UsableEntry[]> {
    return this.repo.usable(userId, legacyId, query);
  }

  /** The input as changes to entries, checked beyond what the input's decorators can. */
  private async changesOf(user: UserEntity, input: UpdateProfileInput): Promise<EntryChange[]> {
    const changes: EntryChange[] = [];
    const single = (field: ProfileField, value: string | null | undefined, long = false) => {
      if (value === undefined) return;
      changes.push({
        field,
        legacyId: null,
        value: long ? cleanParagraphs(value) : cleanText(value),
      });
    };
    single('preferredName', input.preferredName);
    single('pronouns', input.pronouns);
    single('homeTown', input.homeTown);
    single('conversationGoals', input.conversationGoals, true);
    single('notes', input.notes, true);
    if (input.birthday !== undefined) {
      const birthday = cleanText(input.birthday);
      if (birthday !== null && !isPlausibleBirthday(birthday, new Date())) {
        throw ProfileException.invalid(
          'birthday',
          'birthday must be a real date between 1900-01-01 and today',
        );
      }
      changes.push({ field: 'birthday', legacyId: null, value: birthday });
    }
    for (const field of ['languages', 'interests'] as const) {
      if (input[field] !== undefined) {
        changes.push({ field, legacyId: null, value: cleanList(input[field]) });
      }
    }
    if (input.relationships) {
      const legacyIds = input.relationships.map((r) => r.legacyId.toLowerCase());
      const duplicate = legacyIds.findIndex((id, i) => legacyIds.indexOf(id) !== i);
      if (duplicate >= 0) {
        throw ProfileException.invalid(
          `relationships.${duplicate}.legacyId`,
          'Each legacy can be given one relationship per call.',
        );
      }
      // A legacy the caller is not in answers exactly as an unknown one.
      const member = await this.legacies.memberOf(user.id, legacyIds);
      if (legacyIds.some((id) => !member.has(id))) throw LegacyException.notFound();
      input.relationships.forEach((r, i) =>
        changes.push({
          field: 'relationship',
          legacyId: legacyIds[i],
          value: cleanText(r.relationship),
        }),
      );
    }
    return changes;
  }

  private async embed(items: { key: string; text: string }[]): Promise<Embedded[]> {
    if (items.length === 0) return [];
    const embedded = await this.embeddings.embedForStorage(items.map((i) => i.text));
    return items.map((item, i) => ({
      ...item,
      vectors: sliceEmbedded(embedded, i),
    }));
  }

  private storeVectors(
    m: EntityManager,
    userId: string,
    id: string,
    entry: { legacyId: string | null },
    ready: Embedded,
  ): Promise<void> {
    return this.embeddings.store(
      PROFILE_KIND,
      [{ id, legacyId: entry.legacyId, userId }],
      ready.vectors,
      m,
    );
  }

  /** Embeds every entry after consent is given, if consent and the text still stand. */
  private async embedAll(userId: string): Promise<void> {
    const entries = await this.repo.entries(userId);
    const embedded = await this.embed(
      entries.map((e) => ({ key: entryKey(e.field, e.legacyId), text: e.text })),
    );
    if (embedded.every((e) => e.vectors.length === 0)) return;
    await this.repo.transaction(async (m) => {
      const locked = await this.repo.lock(m, userId);
      if (!locked.consent) return;
      const now = new Map(
        (await this.repo.entries(userId, m)).map((e) => [entryKey(e.field, e.legacyId), e]),
      );
      for (const ready of embedded) {
        const entry = now.get(ready.key);
        if (entry && entry.text === ready.text)
          await this.storeVectors(m, userId, entry.id, entry, ready);
      }
    });
  }
}

function toModel(profile: ProfileEntity | null, entries: ProfileEntryRow[]): ProfileModel {
  const model: ProfileModel = {
    consent: profile?.consent ?? false,
    consentChangedAt: profile?.consentChangedAt ?? null,
    preferredName: null,
    pronouns: null,
    birthday: null,
    homeTown: null,
    relationships: [],
    languages: [],
    interests: [],
    conversationGoals: null,
    notes: null,
    updatedAt: profile?.updatedAt ?? null,
  };
  for (const entry of entries) {
    const value = entry.value;
    if (entry.field === 'relationship') {
      model.relationships.push({
        legacyId: entry.legacyId!,
        legacyName: entry.legacyName ?? '',
        relationship: String(value),
      });
    } else if (entry.field === 'languages' || entry.field === 'interests') {
      model[entry.field] = Array.isArray(value) ? value : [value];
    } else {
      model[entry.field] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return model;
}
