/**
 * The set of event types a build knows: validates payloads at append and upcasts old
 * schema versions on read. Pure.
 */
import type { EventDefinition } from './defineEvent.ts';
import { InvalidEventPayload, MissingUpcaster, UnknownEventType } from './errors.ts';

export class EventCatalog {
  private readonly definitions = new Map<string, EventDefinition>();

  constructor(definitions: Iterable<EventDefinition> = []) {
    for (const definition of definitions) this.add(definition);
  }

  add(definition: EventDefinition): this {
    if (this.definitions.has(definition.type)) {
      throw new Error(`event type '${definition.type}' is declared twice; declare each type in one place`);
    }
    this.definitions.set(definition.type, definition);
    return this;
  }

  has(type: string): boolean {
    return this.definitions.has(type);
  }

  types(): string[] {
    return [...this.definitions.keys()].sort();
  }

  definition(type: string, where: string): EventDefinition {
    const definition = this.definitions.get(type);
    if (!definition) throw new UnknownEventType(type, where);
    return definition;
  }

  /** Throws `UnknownEventType` or `InvalidEventPayload` naming the first bad field. */
  validate(type: string, data: unknown): EventDefinition {
    const definition = this.definition(type, 'append refused');
    const issue = definition.schema.check(data, '');
    if (issue) throw new InvalidEventPayload(type, issue.path, issue.expected, issue.got);
    return definition;
  }

  /** Lifts `data` stored at `schemaVersion` to the declared version. */
  upcast(type: string, schemaVersion: number, data: unknown, where: string): unknown {
    const definition = this.definition(type, where);
    let current = data;
    for (let version = schemaVersion; version < definition.schemaVersion; version++) {
      const upcaster = definition.upcasters.find((u) => u.from === version);
      if (!upcaster) throw new MissingUpcaster(type, version, definition.schemaVersion, where);
      current = upcaster.up(current);
    }
    return current;
  }
}
