// The legacy code family of a request is decided before its schema is checked, so it must hold
// for any body or query, valid or not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allocationFamilyOf, blockFamilyOf, codeForFamily, familyOfScope } from '../../../src/modules/unavailability/families.js';

describe('blockFamilyOf', () => {
  test('the first scope id given decides, in the order LocationId, ResourceId, ServiceId', () => {
    assert.equal(blockFamilyOf({ LocationId: 'l', ResourceId: 'r' }), 'CALENDARBLOCK');
    assert.equal(blockFamilyOf({ ResourceId: 'r', ServiceId: 's' }), 'RESOURCEBLOCK');
    assert.equal(blockFamilyOf({ LocationId: undefined, ServiceId: 's' }), 'SERVICEBLOCK');
    // A scope id of the wrong type still names the family (the schema reports the type).
    assert.equal(blockFamilyOf({ ServiceId: 42 }), 'SERVICEBLOCK');
  });

  test('a body that is not an object, or names no scope, is of the location family', () => {
    for (const body of [undefined, null, 'text', 7, [], {}]) assert.equal(blockFamilyOf(body), 'CALENDARBLOCK');
  });
});

describe('allocationFamilyOf', () => {
  test('a non-empty ResourceId makes the resource family; anything else the service family', () => {
    assert.equal(allocationFamilyOf({ LocationId: 'l', ResourceId: 'r' }), 'RESOURCEALLOCATION');
    assert.equal(allocationFamilyOf({ LocationId: 'l', ResourceId: '' }), 'SERVICEALLOCATION');
    assert.equal(allocationFamilyOf({ LocationId: 'l', ServiceId: 's' }), 'SERVICEALLOCATION');
    for (const query of [undefined, null, 'ResourceId=r']) assert.equal(allocationFamilyOf(query), 'SERVICEALLOCATION');
  });
});

describe('codeForFamily', () => {
  test('a location code becomes the same rule\'s code of the caller\'s family', () => {
    assert.equal(codeForFamily('CALENDARBLOCK-103', 'RESOURCEBLOCK'), 'RESOURCEBLOCK-100');
    assert.equal(codeForFamily('CALENDARBLOCK-104', 'SERVICEBLOCK'), 'SERVICEBLOCK-104');
    assert.equal(codeForFamily('CALENDARBLOCK-REQUIRED-100', 'SERVICEBLOCK'), 'SERVICEBLOCK-REQUIRED-100');
    assert.equal(codeForFamily('SERVICEALLOCATION-REQUIRED-102', 'RESOURCEALLOCATION'), 'RESOURCEALLOCATION-REQUIRED-102');
    assert.equal(codeForFamily('INVALIDTIME-100', 'RESOURCEBLOCK'), 'INVALIDTIME-100');
  });

  test('schemas carry the location (or service allocation) code; other families get theirs', () => {
    assert.equal(codeForFamily('CALENDARBLOCK-103', 'CALENDARBLOCK'), 'CALENDARBLOCK-103');
    assert.equal(codeForFamily('CALENDARBLOCK-103', 'RESOURCEBLOCK'), 'RESOURCEBLOCK-100');
    assert.equal(codeForFamily('CALENDARBLOCK-104', 'RESOURCEBLOCK'), 'RESOURCEBLOCK-101');
    assert.equal(codeForFamily('CALENDARBLOCK-104', 'SERVICEBLOCK'), 'SERVICEBLOCK-104');
    assert.equal(codeForFamily('CALENDARBLOCK-REQUIRED-102', 'SERVICEBLOCK'), 'SERVICEBLOCK-REQUIRED-102');
    assert.equal(codeForFamily('SERVICEALLOCATION-REQUIRED-103', 'RESOURCEALLOCATION'), 'RESOURCEALLOCATION-REQUIRED-103');
    assert.equal(codeForFamily('INVALIDTIME-100', 'RESOURCEBLOCK'), 'INVALIDTIME-100');
    assert.equal(codeForFamily('REPEAT-101', 'RESOURCEALLOCATION'), 'REPEAT-101');
  });

  test('a stored scope\'s family is the scope id it has', () => {
    assert.equal(familyOfScope({ locationId: 'l', resourceId: null }), 'CALENDARBLOCK');
    assert.equal(familyOfScope({ locationId: null, resourceId: 'r' }), 'RESOURCEBLOCK');
    assert.equal(familyOfScope({ locationId: null, resourceId: null }), 'SERVICEBLOCK');
  });
});
