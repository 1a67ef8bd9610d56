"""smacv2's memory of sighted enemies (envs/smac/sighting.py) against a reference written as smacv2's own loops
(smacv2/env/starcraft2/starcraft2.py: step() forgets, get_obs_agent() sights and zeroes), prob_obs_enemy = 1."""
import numpy as np
import pytest

from core.errors import UserError
from envs.smac import StarCraft2Env
from envs.smac.batch import make_batch
from envs.smac.sighting import NO_TURN, EnemySighting


class Smacv2Reference:
    """One battle's enemy_tags and obs_enemies, updated as smacv2's loops update them."""

    def __init__(self, n_agents: int, n_enemies: int) -> None:
        self.tags: list[int | None] = [None] * n_enemies
        self.obs = np.zeros((n_enemies, n_agents))

    def step(self, ally_alive: np.ndarray, enemy_alive: np.ndarray) -> None:
        for al, alive in enumerate(ally_alive):
            if not alive:
                for e, tag in enumerate(self.tags):
                    if tag == al:
                        self.tags[e] = None
                        self.obs[e, :] = 0
                        self.obs[:, al] = 0
        for e, alive in enumerate(enemy_alive):
            if not alive:
                self.tags[e] = None
                self.obs[e, :] = 0

    def agent(self, agent: int, in_sight: np.ndarray, enemy_alive: np.ndarray) -> list[bool]:
        """The enemies whose features agent `agent`'s observation holds (it is alive; in_sight: [E])."""
        shown = [False] * len(self.tags)
        for e in range(len(self.tags)):
            visible = bool(in_sight[e])
            if visible and self.tags[e] is None:
                self.obs[e, :] = 1  # the agent itself, and every other agent with probability 1
                self.tags[e] = agent
            if self.obs[e, agent] == 0:
                visible = False
            shown[e] = visible and bool(enemy_alive[e])
            if self.obs[e, agent] == 0:
                shown = [False] * len(self.tags)
        return shown


def enemy_blocks(core, obs):
    f = core.features
    return obs[:, :, f.n_move:f.n_move + core.n_enemies * f.nf_en].reshape(len(obs), core.n_agents, -1, f.nf_en)


@pytest.mark.parametrize("name", ["smaclite_zerg_10_vs_11", "smaclite_protoss_5_vs_5"])
def test_sighting_equals_smacv2s_loops(name):
    n_envs, rng = 6, np.random.default_rng(1)
    core = make_batch(name, n_envs, 3, None, {})
    twin = make_batch(name, n_envs, 3, None, {"sighted_enemies": False})  # the same battles, no memory
    a = core.n_agents
    refs = [Smacv2Reference(a, core.n_enemies) for _ in range(n_envs)]
    everything = np.ones(n_envs, bool)
    core.reset(everything)
    twin.reset(everything)
    hidden = kills = 0
    for t in range(120):
        turns = rng.random((n_envs, a))
        if t % 7 == 3:
            turns[:, 0] = NO_TURN  # agent 0 takes no turn (a get_obs_agent call for the others)
        s = core.battle.state
        sight, _ = core.features.ranges(slice(None))
        in_sight = (np.abs(s.z[:, None, a:] - s.z[:, :a, None]) < sight) & s.alive[:, :a, None]
        expected = np.zeros((n_envs, a, core.n_enemies), bool)
        for b, ref in enumerate(refs):
            for agent in np.argsort(turns[b]):
                if s.alive[b, agent] and np.isfinite(turns[b, agent]):
                    expected[b, agent] = ref.agent(agent, in_sight[b, agent], s.alive[b, a:])
        obs, state, avail = core.observe(turns=turns)
        plain, plain_state, _ = twin.observe()
        # agents without a turn see what the others' turns left them (smacv2 never builds their observation)
        took_turn = np.isfinite(turns) & s.alive[:, :a]
        got = np.abs(enemy_blocks(core, obs)).sum(-1) > 0
        np.testing.assert_array_equal(got[took_turn], expected[took_turn])
        np.testing.assert_array_equal(enemy_blocks(core, obs), enemy_blocks(twin, plain) * got[..., None])
        rest = np.ones(obs.shape[-1], bool)
        rest[core.features.n_move:core.features.n_move + core.n_enemies * core.features.nf_en] = False
        np.testing.assert_array_equal(obs[..., rest], plain[..., rest])
        np.testing.assert_array_equal(state, plain_state)
        hidden += int((in_sight & s.alive[:, None, a:] & ~expected)[took_turn].sum())
        kills += int((~s.alive[:, a:]).sum())
        actions = np.argmax(rng.random(avail.shape) * avail, -1)
        out, twin_out = core.step(actions), twin.step(actions)
        np.testing.assert_array_equal(out.reward, twin_out.reward)
        alive = core.battle.state.alive
        for b, ref in enumerate(refs):
            ref.step(alive[b, :a], alive[b, a:])
        done = out.ended | out.timeout
        if done.any():
            core.reset(done)
            twin.reset(done)
            for b in np.flatnonzero(done).tolist():
                refs[b] = Smacv2Reference(a, core.n_enemies)
    assert hidden > 0 and kills > 0  # the memory hid enemies in sight, and battles had kills


def test_shown_zeroes_everything_before_the_last_hidden_enemy():
    may_see = np.array([[True, True, False, True, True], [True] * 5, [False] * 5, [True, False, True, True, False]])
    np.testing.assert_array_equal(EnemySighting.shown(may_see), [[False, False, False, True, True], [True] * 5,
                                                                  [False] * 5, [False] * 5])


def test_the_drop_in_sights_on_each_get_obs_call_as_smacv2_does():
    env = StarCraft2Env(map_name="smaclite_protoss_5_vs_5", seed=0)
    env.reset(episode_config={"ally_start_positions": {"item": [[16, 16]] * 5},
                              "enemy_start_positions": {"item": [[20, 20], [19, 19], [18, 20], [20, 18], [29, 29]]}})
    n_enemies, nf = env.get_obs_enemy_feats_size()
    start = env.get_obs_move_feats_size()

    def enemies(obs: np.ndarray) -> np.ndarray:
        return np.asarray(obs[start:start + n_enemies * nf].reshape(n_enemies, nf).any(1))

    # enemies 0-3 stand in sight, enemy 4 out of everyone's: smacv2 zeroes the enemies before it
    assert [enemies(o).tolist() for o in env.get_obs()] == [[False] * 5] * 5
    env.core.battle.state.z[0, 5 + 4] = complex(21, 21)  # enemy 4 comes into sight: one call sights it
    assert enemies(env.get_obs_agent(1)).all()
    assert all(enemies(o).all() for o in env.get_obs())


def test_sighting_is_saved_and_resumed_exactly():
    core = make_batch("smaclite_terran_5_vs_5", 4, 0, None, {})
    core.reset(np.ones(4, bool))
    rng = np.random.default_rng(0)
    for _ in range(10):
        core.step(np.argmax(rng.random((4, 5, core.n_actions)) * core.observe()[2], -1))
    saved = core.state_dict()
    again = make_batch("smaclite_terran_5_vs_5", 4, 99, None, {})
    again.load_state_dict(saved)
    assert core.sighting is not None and again.sighting is not None
    np.testing.assert_array_equal(again.sighting.owner, core.sighting.owner)
    assert (core.sighting.owner >= 0).any()
    for _ in range(5):
        (obs, _, avail), (obs_again, _, _) = core.observe(), again.observe()
        np.testing.assert_array_equal(obs, obs_again)
        actions = np.argmax(rng.random((4, 5, core.n_actions)) * avail, -1)
        core.step(actions)
        again.step(actions)


def test_smacv2_observations_cannot_stand_in_for_the_state():
    with pytest.raises(UserError, match="obs_instead_of_state is not available on smaclite_zerg_5_vs_5"):
        StarCraft2Env(map_name="smaclite_zerg_5_vs_5", obs_instead_of_state=True)
