/**
 * The web UI's connections, at most `max` at once, without letting idle ones lock anybody out:
 * when every slot is taken, a new connection evicts the oldest one that has no request in
 * progress (still sending its headers, or idle between keep-alive requests) instead of being
 * refused. Only when every connection has a request in progress is the new one closed.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class ConnectionSlots {
  /** Open connections, oldest first, each with how many of its requests are in progress. */
  private readonly connections = new Map<Socket, number>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.connections.size;
  }

  /** Tracks `server`'s connections and requests from now on. */
  watch(server: Server): void {
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => this.track(request.socket, response));
  }

  private admit(socket: Socket): void {
    if (this.connections.size >= this.max && !this.evictOldestIdle()) {
      socket.destroy();
      return;
    }
    this.connections.set(socket, 0);
    socket.once('close', () => this.connections.delete(socket));
  }

  private track(socket: Socket, response: ServerResponse): void {
    const requests = this.connections.get(socket);
    if (requests === undefined) return;
    this.connections.set(socket, requests + 1);
    response.once('close', () => {
      const left = this.connections.get(socket);
      if (left !== undefined) this.connections.set(socket, left - 1);
    });
  }

  /** Closes the oldest connection without a request in progress; false when there is none. */
  private evictOldestIdle(): boolean {
    for (const [socket, requests] of this.connections) {
      if (requests > 0) continue;
      this.connections.delete(socket);
      socket.destroy();
      return true;
    }
    return false;
  }
}
