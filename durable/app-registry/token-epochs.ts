// Bumped whenever an app's tokens are revoked, so a token cached by the worker is dropped;
// the instance part changes whenever the object is loaded again (its counters start over).
import { registryEpoch } from "../change-epoch";

export class TokenEpochs {
  private readonly epochs = new Map<string, number>();
  private readonly instance = crypto.randomUUID();

  bump(name: string): void {
    registryEpoch.bump();
    this.epochs.set(name, (this.epochs.get(name) ?? 0) + 1);
  }

  of(name: string): string {
    return `${this.instance}:${this.epochs.get(name) ?? 0}`;
  }
}
